"""Every file COVER writes goes through :mod:`cover.io.output` (atomic, inputs refused).

The source tree is scanned for direct writes: ``Path.write_text`` / ``write_bytes``,
``open`` / ``Path.open`` in a writing mode, ``savefig`` to anything but an in-memory
buffer, ``json.dump``, ``np.save*``, ``to_parquet`` / ``to_csv``, ``pq.write_table``,
``os.rename`` / ``os.replace`` / ``shutil`` copies and moves, downloads. A legitimate
exception is allow-listed below with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cover"

#: (path under src/cover, call) -> why a direct write is right there.
ALLOWED: dict[tuple[str, str], str] = {
    ("jobs/ground.py", "open"): "the resumable append-only log of `cover ground`: each line "
    "is one finished answer, flushed as it arrives, so a crash loses at most the line being "
    "written and a rerun skips every query already answered (an atomic rewrite would lose "
    "the whole run on a crash)",
    ("io/fetch.py", "retrieve"): "pooch downloads into a temporary file and moves it into "
    "the cache only once complete and its sha256 checks out",
}

_WRITE_MODES = set("wax+")
#: Methods that write whatever they are called on (Path, DataFrame, ndarray, pooch).
_METHOD_WRITES = {"write_text", "write_bytes", "to_parquet", "to_csv", "to_feather",
                  "retrieve", "tofile"}
#: Names that write only when called on these modules (``s.replace`` is str.replace;
#: a Path's own ``rename`` / ``replace`` cannot be told apart from it and is not caught).
_MODULE_RECEIVERS = {"replace": {"os"}, "rename": {"os"}, "copy": {"shutil"},
                     "copy2": {"shutil"}, "copyfile": {"shutil"}, "copytree": {"shutil"},
                     "move": {"shutil"}, "save": {"np", "numpy"}, "savez": {"np", "numpy"},
                     "savez_compressed": {"np", "numpy"}, "savetxt": {"np", "numpy"},
                     "write_table": {"pq", "parquet"}, "dump": {"json", "pickle"}}


def _mode(call: ast.Call, position: int) -> str | None:
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return str(call.args[position].value)
    return None


def _buffers(tree: ast.AST) -> set[str]:
    """Names bound to an in-memory buffer (``io.BytesIO()`` / ``BytesIO()``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("BytesIO", "StringIO"):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def direct_writes(source: str) -> list[tuple[int, str]]:
    """``(line, call)`` of every direct file write in ``source``."""
    tree = ast.parse(source)
    buffers = _buffers(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            mode = _mode(node, 1)
            if mode is not None and _WRITE_MODES & set(mode):
                found.append((node.lineno, "open"))
            continue
        if not isinstance(f, ast.Attribute):
            continue
        recv = f.value.id if isinstance(f.value, ast.Name) else None
        if f.attr == "open":
            mode = _mode(node, 0)
            if recv not in ("gzip", "av") and mode is not None and _WRITE_MODES & set(mode):
                found.append((node.lineno, "open"))
        elif f.attr == "savefig":
            target = node.args[0] if node.args else None
            if not (isinstance(target, ast.Name) and target.id in buffers):
                found.append((node.lineno, "savefig"))
        elif f.attr in _MODULE_RECEIVERS:
            if recv in _MODULE_RECEIVERS[f.attr]:
                found.append((node.lineno, f.attr))
        elif f.attr in _METHOD_WRITES and recv != "output":
            found.append((node.lineno, f.attr))
    return found


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p.name != "output.py" or
                  p.parent.name != "io")


def test_no_direct_writes_outside_the_output_module() -> None:
    assert len(_sources()) > 50
    bad = []
    used: set[tuple[str, str]] = set()
    for path in _sources():
        rel = path.relative_to(SRC).as_posix()
        for line, call in direct_writes(path.read_text(encoding="utf-8")):
            if (rel, call) in ALLOWED:
                used.add((rel, call))
            else:
                bad.append(f"src/cover/{rel}:{line}: {call}")
    assert not bad, ("write files through cover.io.output (atomic_open, write_text, "
                     "write_bytes, write_json):\n" + "\n".join(bad))
    assert used == set(ALLOWED), f"stale allow-list entries: {set(ALLOWED) - used}"


@pytest.mark.parametrize("code, call", [
    ('Path(p).write_text("x")', "write_text"),
    ("p.write_bytes(b)", "write_bytes"),
    ('open(p, "w")', "open"),
    ('open(p, mode="ab")', "open"),
    ('p.open("w", encoding="utf-8")', "open"),
    ('fig.savefig("out.png")', "savefig"),
    ("fig.savefig(target)", "savefig"),
    ("json.dump(obj, fh)", "dump"),
    ("np.save(p, a)", "save"),
    ("df.to_parquet(p)", "to_parquet"),
    ("pq.write_table(t, p)", "write_table"),
    ("os.replace(a, b)", "replace"),
    ("shutil.copy(a, b)", "copy"),
])
def test_the_scan_finds_each_kind_of_direct_write(code: str, call: str) -> None:
    assert direct_writes(code) == [(1, call)]


@pytest.mark.parametrize("code", [
    'open(p, "rb")', "open(p)", 'p.open("rb")', 'gzip.open(p, "rb")', "json.dumps(x)",
    "buf = io.BytesIO()\nfig.savefig(buf, format='png')", 'write_text(p, "x", inputs=[q])',
    "output.write_bytes(p, b)", 's.replace("a", "b")', "replace(table, qid=q)", "a.copy()",
    'writer.write_table(t)',
])
def test_the_scan_leaves_reads_and_output_module_calls_alone(code: str) -> None:
    assert direct_writes(code) == []
