"""Opening prediction files safely, and the careful line-by-line diagnosis of broken ones.

Files are recognised as gzip by their first bytes (not their name), a UTF-8 byte-order mark
is skipped, and every way a file can be unreadable (truncated or corrupt gzip, not UTF-8,
binary content, rows with too few or too many fields) becomes one
:class:`~pbassess.errors.DataError` line naming the file and the line. The fast readers in
:mod:`pbassess.data.readers` call :func:`diagnose` only after the fast path has failed.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path

from pbassess.errors import DataError

__all__ = ["diagnose", "first_lines", "input_stream", "is_gzip", "open_text"]

_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    """Whether the file starts with the gzip magic bytes (whatever its name)."""
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise DataError(f"file not found: {path}")
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a prediction file")


def _raw_lines(path: Path) -> Iterator[bytes]:
    _check_exists(path)
    opener = gzip.open if is_gzip(path) else open
    try:
        with opener(path, "rb") as fh:
            yield from fh
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataError(f"{path}: the gzip file is truncated or corrupt ({exc})") from None


def _decode(path: Path, lineno: int, raw: bytes) -> str:
    if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\x00" in raw:
        raise DataError(f"{path}: line {lineno} holds binary data (NUL bytes): not a text file of predictions")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
        raise DataError(f"{path}: line {lineno} is not UTF-8 text (byte 0x{byte:02x} at column {exc.start + 1}); "
                        "save the file as UTF-8") from None


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, decoded line) pairs, with one-line errors for unreadable content."""
    for lineno, raw in enumerate(_raw_lines(path), start=1):
        yield lineno, _decode(path, lineno, raw)


def first_lines(path: str | Path, n: int = 2) -> list[str]:
    """The first ``n`` lines of a (possibly gzipped) text file, BOM removed."""
    out = []
    for lineno, line in text_lines(Path(path)):
        out.append(line)
        if lineno >= n:
            break
    return out


def open_text(path: str | Path):
    """A text stream of the file (gzip by content, UTF-8, BOM skipped)."""
    path = Path(path)
    _check_exists(path)
    raw = gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8-sig")


def input_stream(path: Path):
    """A pyarrow input stream of the file's (decompressed) bytes."""
    import pyarrow as pa

    _check_exists(path)
    return pa.input_stream(str(path), compression="gzip" if is_gzip(path) else None)


def _fields_whitespace(line: str) -> list[str]:
    return line.split()


def diagnose(path: Path, *, whitespace: bool, numeric: dict[int, str] | None = None) -> None:
    """Scan a table line by line and raise the first problem found (or return if none is found).

    Parameters
    ----------
    whitespace : bool
        Fields separated by runs of whitespace (else a comma-separated file with quoting).
    numeric : dict of column index to a description, optional
        Columns that must hold numbers, e.g. ``{3: "confidence"}``.
    """
    numeric = numeric or {}
    expected = None
    lines = text_lines(path)
    if whitespace:
        rows = ((lineno, _fields_whitespace(line)) for lineno, line in lines)
    else:
        rows = _csv_rows(path)
    for lineno, fields in rows:
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if expected is None:
            expected = len(fields)
            continue
        if len(fields) != expected:
            kind = "too few: a short row" if len(fields) < expected else "too many: an extra field"
            raise DataError(f"{path}: line {lineno} has {len(fields)} fields, expected {expected} ({kind})")
        for col, what in numeric.items():
            value = fields[col].strip()
            try:
                float(value)
            except ValueError:
                if value != "":
                    raise DataError(f"{path}: line {lineno} has {what} {value!r}, not a number") from None


def _csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """CSV rows with the number of the line each starts on."""
    lines = text_lines(path)
    state = {"lineno": 0}

    def feed():
        for lineno, line in lines:
            state["lineno"] = lineno
            yield line

    reader = csv.reader(feed())
    start = 1
    try:
        for row in reader:
            yield start, row
            start = state["lineno"] + 1
    except csv.Error as exc:
        raise DataError(f"{path}: line {state['lineno']} cannot be parsed as CSV ({exc})") from None
