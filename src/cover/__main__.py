"""``python -m cover`` runs the command line."""

from cover.cli import main

raise SystemExit(main())
