"""The layers of docs/architecture.md hold: the import contracts in pyproject.toml
(``[tool.importlinter]``: layers, a pure core, no circles, who may call the jobs and the
command line) are kept, and no module imports another module's private names."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SRC = REPO / "src" / "cover"


def test_import_contracts_are_kept():
    """Every contract of ``[tool.importlinter]`` is kept (imports inside functions and
    under TYPE_CHECKING count: they are dependencies too)."""
    exe = (shutil.which("lint-imports", path=str(Path(sys.executable).parent))
           or shutil.which("lint-imports"))
    if exe is None:
        pytest.skip("import-linter not installed (it is in the test extra)")
    # This tree's sources first, before any installed copy of cover.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([exe, "--no-cache"], cwd=REPO, capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(text: str, me: str, where: str) -> list[str]:
    """Where module ``me`` (source ``text``, file ``where``) takes a private name
    (``_name``) of another module of cover: ``from cover.x import _name``, or ``x._name``
    on a module it imported."""
    tree = ast.parse(text)
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> cover module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "cover" and node.module != me:
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno}: from {node.module} "
                                 f"import {alias.name}")
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "cover" and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) \
                and isinstance(node.value, ast.Name) and node.value.id in modules:
            found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr} "
                         f"({modules[node.value.id]})")
    return found


def test_no_module_imports_another_modules_private_names():
    """A name that starts with ``_`` belongs to the module that defines it: a helper two
    modules share is public in its owner (no underscore), or lives where both can see it."""
    found = [use for path in sorted(SRC.rglob("*.py"))
             for use in private_uses(path.read_text(encoding="utf-8"), _module_name(path),
                                     str(path.relative_to(REPO)))]
    assert not found, "private names taken from other modules:\n" + "\n".join(found)


def test_the_private_name_check_sees_both_forms():
    """The scan above catches an imported private name and one reached through a module,
    and leaves a module's own private names alone."""
    text = ("from cover.io.jsonl import _qid_hint\n"
            "import cover.io.output as out\n"
            "x = out._same_file\n"
            "from cover.io import jsonl\n"
            "y = jsonl._parse_slowly\n"
            "from cover.probe import _mine\n")
    assert private_uses(text, "cover.probe", "probe.py") == [
        "probe.py:1: from cover.io.jsonl import _qid_hint",
        "probe.py:3: out._same_file (cover.io.output)",
        "probe.py:5: jsonl._parse_slowly (cover.io.jsonl)",
    ]
