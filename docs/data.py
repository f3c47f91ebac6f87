"""Regenerates the registry table of docs/data.md from cover.io.data_registry: every file
``cover data`` knows, its size, what it is and its license (no data read).

Usage: python docs/data.py  (prints the blocks)
"""

from __future__ import annotations

import sys
from pathlib import Path

from cover.io.data_registry import REGISTRY


def blocks(data: Path | None = None) -> dict[str, str]:
    rows = ["| name | size | what | source | license |", "|---|---:|---|---|---|"]
    rows += [f"| {e.name} | {e.size / 1e6:.1f} MB | {e.what} | `{e.repo}` | {e.license} |"
             for e in REGISTRY.values()]
    total = sum(e.size for e in REGISTRY.values()) / 1e6
    return {"registry": "\n".join(rows) + "\n",
            "total": f"`cover data fetch all` downloads every one of the {len(REGISTRY)} "
                     f"registered files ({total:.0f} MB).\n"}


if __name__ == "__main__":
    for name, text in blocks(Path(sys.argv[1]) if len(sys.argv) > 1 else None).items():
        print(f"--- {name}\n{text}")
