"""Opening an input file: the one place every reader's file checks live.

Rules (each an :class:`~cover.errors.InputError` naming the file):

* a missing path is "no such file"; a folder is "is a folder; give a file";
* a pipe, socket or device (``--preds <(zcat x.gz)``, ``/dev/stdin``) is refused: the
  readers read an input more than once (format detection, then its rows; a streamed
  CSV's qid pass, then its rows), which a pipe cannot give; save it to a file first;
* gzip bytes are gunzipped, whatever the file is called;
* a UTF-8 byte-order mark at the start of the text is skipped (editors on Windows write
  one); it never reaches a parser, so a BOM'd file reads as the same file without it.
"""

from __future__ import annotations

import gzip
import stat
import zlib
from pathlib import Path
from typing import IO, Any, Literal

from cover.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
CSV_SUFFIXES = (".csv", ".tsv")
PARQUET_SUFFIXES = (".parquet", ".pq")
TABLE_SUFFIXES = CSV_SUFFIXES + PARQUET_SUFFIXES
#: What a file's name says it holds (:func:`suffix_kind`).
SuffixKind = Literal["jsonl", "parquet", "csv"]
#: What reading a damaged or cut gzip stream raises (:func:`damaged_gzip` names it).
GZIP_ERRORS = (OSError, EOFError, zlib.error)


def damaged_gzip(path: str | Path, exc: BaseException) -> InputError:
    """The error for gzip bytes that cannot be read to their end, naming the file."""
    return InputError(f"{path}: damaged or truncated gzip file ({exc})")


def cannot_read(path: str | Path, exc: OSError) -> InputError:
    """The error for a file the system refuses to read, naming it and the reason."""
    return InputError(f"{path}: cannot read the file ({exc.strerror})")


def kind_suffix(path: str | Path) -> str:
    """The suffix that names a file's kind, under a trailing ``.gz`` (``x.csv.gz`` ->
    ``.csv``); lower case."""
    p = Path(path)
    s = p.suffix.lower()
    return Path(p.stem).suffix.lower() if s == ".gz" else s


def suffix_kind(path: str | Path) -> SuffixKind:
    """``parquet`` for a ``.parquet``/``.pq`` name, ``csv`` for ``.csv``/``.tsv`` (each
    gzipped or not), any other name (``-`` too) ``jsonl``."""
    kind = kind_suffix(path)
    return "parquet" if kind in PARQUET_SUFFIXES else "csv" if kind in CSV_SUFFIXES else "jsonl"


def is_gzip(path: str | Path) -> bool:
    """Whether the file starts with the gzip magic bytes (whatever it is called)."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(2) == GZIP_MAGIC
    except OSError:
        return False


def check_input(path: str | Path) -> Path:
    """``path`` as a :class:`Path` when it is a regular file (or a link to one) that
    exists, else an :class:`InputError` saying what it is instead."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise cannot_read(path, exc) from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a folder; give a file")
    if not stat.S_ISREG(mode):
        kind = "a pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        raise InputError(f"{path}: {kind}, not a regular file; inputs are read more than "
                         "once, which a pipe cannot give (e.g. `--preds <(zcat x.gz)`): "
                         "save it to a file first (gzip files are read as they are)")
    return p


def open_input(path: str | Path) -> IO[bytes]:
    """The file's text as a binary stream: gunzipped when its bytes are gzip, a leading
    byte-order mark skipped (:func:`check_input`'s rules first)."""
    p = check_input(path)
    try:
        fh: Any = p.open("rb")
    except OSError as exc:
        raise cannot_read(path, exc) from None
    if fh.read(2) == GZIP_MAGIC:
        fh.close()
        fh = gzip.GzipFile(p, "rb")
    else:
        fh.seek(0)
    skip_bom(fh)
    return fh


def skip_bom(fh: Any) -> None:
    """Leave a seekable binary stream after its byte-order mark, if it starts with one."""
    start = fh.tell()
    try:
        head = fh.read(len(BOM))
    except (OSError, EOFError):
        head = b""  # a damaged gzip stream: the reader's own read says so, naming the file
    if head != BOM:
        fh.seek(start)


def parquet_file(path: str | Path, *, pre_buffer: bool = True) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` of ``path`` (gunzipped into memory when gzip:
    Parquet needs to seek); a file that is not (a complete) Parquet file is an
    :class:`InputError` naming it, never pyarrow's "magic bytes not found".
    ``pre_buffer=False`` for a stream: pyarrow's read-ahead keeps every column chunk it
    read until the file is closed (~10 bytes a row, 104 MB over 1e7 rows), where a
    plain read holds only the row group being decoded."""
    import pyarrow
    import pyarrow.parquet as pq

    p = check_input(path)
    with p.open("rb") as fh:
        gz = fh.read(2) == GZIP_MAGIC
    try:
        if gz:
            with open_input(p) as fh:
                return pq.ParquetFile(pyarrow.BufferReader(fh.read()), pre_buffer=pre_buffer)
        return pq.ParquetFile(p, pre_buffer=pre_buffer)
    except (pyarrow.ArrowException, OSError, EOFError) as exc:
        raise InputError(f"{path}: {not_parquet(exc)}") from None


_FRAMING = ("magic bytes", "size is 0", "file size", "footer", "couldn't deserialize",
            "end of file", "eof", "unexpected end")


def not_parquet(exc: BaseException) -> str:
    """What a pyarrow error on opening a Parquet file means, for a message: a framing
    error (empty, truncated, no footer) says the file is not a (complete) Parquet file;
    any other is pyarrow's first line."""
    text = str(exc).strip()
    if not text or any(f in text.lower() for f in _FRAMING):
        return ("not a (complete) Parquet file: it is empty, truncated, or another kind "
                "of file (a Parquet file ends with its footer and the bytes PAR1)")
    return f"cannot read as Parquet: {text.splitlines()[0]}"


def json_array(path: str | Path) -> bool:
    """Whether ``path``'s text starts with ``[`` (a JSON array: read whole, not by
    lines), gzip and a byte-order mark taken as every reader takes them
    (:func:`cover.io.opener.open_input`)."""
    return _head(path).lstrip()[:1] == b"["


def json_document(path: str | Path) -> bool:
    """Whether ``path``'s first line that is not blank is a lone ``{``: one JSON object
    written over many lines (a calibrator, a dataset's annotation file), never a line of
    JSON lines."""
    head = _head(path).lstrip()
    return head[:1] == b"{" and head[1:].lstrip(b" \t")[:1] in (b"\n", b"\r")


def _head(path: str | Path) -> bytes:
    """The first 4 KB of ``path`` as every reader sees them; empty when it cannot be
    read (the reader then says what is wrong with the file)."""
    try:
        with open_input(path) as fh:
            return bytes(fh.read(4096))
    except (InputError, OSError, EOFError):
        return b""
