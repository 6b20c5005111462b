"""Chunked sources behind the lazy readers: Parquet row groups and byte ranges of a large CSV.

A source knows its column names and Arrow types, and a list of chunks with known row counts,
and reads any subset of columns of one chunk as a :class:`pyarrow.Table`. Nothing is read when
a source is made except Parquet footers (row counts, schema, column statistics) and, for CSV,
one pass over the raw bytes to count lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pbassess.errors import DataError

__all__ = ["CsvSource", "ParquetSource", "TARGET_CHUNK_VALUES", "first_line", "is_hidden", "parquet_files",
           "read_parquet_footer"]

#: Values (rows x columns read) per chunk a reader aims at: 2**24 float64 = 128 MiB per column set.
TARGET_CHUNK_VALUES: int = 1 << 24


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (with its type when the message is empty)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def is_hidden(relative: Path) -> bool:
    """A file under a hidden folder or a hidden file (name starting with ``.`` or ``_``), as pyarrow skips."""
    return any(part.startswith((".", "_")) for part in relative.parts)


def parquet_files(path: Path) -> list[str]:
    """The Parquet files of a file or folder, in sorted name order, hidden files and folders skipped."""
    if not path.is_dir():
        return [str(path)]
    files = sorted(str(p) for p in path.rglob("*")
                   if p.suffix.lower() in (".parquet", ".pq") and not is_hidden(p.relative_to(path)) and p.is_file())
    if not files:
        raise DataError(f"{path}: the folder holds no .parquet files (hidden files and folders, starting with '.' "
                        "or '_', are skipped)")
    return files


def _kind(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "text"
    return str(t)


def _describe(t: Any) -> str:
    names = {"number": "numbers", "text": "text", "bool": "booleans", "null": "only missing values"}
    return f"{names.get(_kind(t), 'values')} ({t})"


def _merge_field(a: Any, b: Any) -> Any:
    """The field holding the values of both parts (int + float -> float64, all-null + x -> x), else None."""
    import pyarrow as pa

    ka, kb = _kind(a.type), _kind(b.type)
    if a.type == b.type or kb == "null":
        return a
    if ka == "null":
        return b
    if ka != kb:
        return None
    if ka == "number":
        ints = [pa.types.is_integer(t.value_type if pa.types.is_dictionary(t) else t) for t in (a.type, b.type)]
        return a.with_type(pa.int64() if all(ints) else pa.float64())
    return a.with_type(pa.string()) if ka == "text" else a


def read_parquet_footer(file: str) -> tuple[Any, Any]:
    """``(metadata, arrow schema)`` of a Parquet file; a damaged or empty file is a one-line DataError."""
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(file)
        return handle.metadata, handle.schema_arrow
    except MemoryError:
        raise
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError (thrift), ... for a damaged footer
        size = Path(file).stat().st_size if Path(file).exists() else 0
        detail = "the file is empty (0 bytes)" if size == 0 else first_line(exc)
        raise DataError(f"{file}: not a readable Parquet file ({detail})") from None


@dataclass(frozen=True)
class ParquetSource:
    """One Parquet file or a folder of them (read in sorted name order, hidden files and folders skipped).

    Parts may hold their columns in any order; every part must hold the same column names, with
    types of one kind (numbers, text, booleans; an all-null column fits any). Row counts come from
    the footers and are checked again when a chunk is read.
    """

    files: tuple[str, ...]
    schema: Any
    chunks: tuple[tuple[int, int, tuple[int, ...]], ...]  # (rows, file index, row groups)

    @classmethod
    def open(cls, path: Path, rows_per_chunk: int) -> ParquetSource:
        files = parquet_files(path)
        schema, chunks = None, []
        for index, file in enumerate(files):
            meta, file_schema = read_parquet_footer(file)
            if schema is None:
                schema = file_schema
            else:
                schema = cls._merge(schema, file_schema, file, files[0])
            group, rows = [], 0
            for rg in range(meta.num_row_groups):
                group.append(rg)
                rows += meta.row_group(rg).num_rows
                if rows >= rows_per_chunk:
                    chunks.append((rows, index, tuple(group)))
                    group, rows = [], 0
            if group and rows:
                chunks.append((rows, index, tuple(group)))
        if not chunks:
            raise DataError(f"{path}: the pool is empty (no rows)")
        return cls(tuple(files), schema, tuple(chunks))

    @staticmethod
    def _merge(schema: Any, other: Any, file: str, first: str) -> Any:
        import pyarrow as pa

        names, others = list(schema.names), list(other.names)
        if len(set(others)) != len(others):
            dup = next(c for c in others if others.count(c) > 1)
            raise DataError(f"{file}: column {dup!r} appears more than once")
        if set(names) != set(others):
            missing = [c for c in names if c not in others]
            extra = [c for c in others if c not in names]
            what = "; ".join(p for p in (f"lacks {', '.join(map(repr, missing))}" if missing else "",
                                         f"has {', '.join(map(repr, extra))} too" if extra else "") if p)
            raise DataError(f"{file}: its columns differ from those of {first} ({what})")
        fields = []
        for name in names:
            a, b = schema.field(name), other.field(name)
            merged = _merge_field(a, b)
            if merged is None:
                raise DataError(f"{file}: column {name!r} holds {_describe(b.type)}, but {_describe(a.type)} in {first}")
            fields.append(merged)
        return pa.schema(fields)

    def where(self, chunk: int) -> str:
        """The file a chunk is read from."""
        return self.files[self.chunks[chunk][1]]

    def read(self, chunk: int, columns: list[str]) -> Any:
        import pyarrow.parquet as pq

        rows, index, groups = self.chunks[chunk]
        file = self.files[index]
        try:
            table = pq.ParquetFile(file).read_row_groups(list(groups), columns=columns)
        except MemoryError:
            raise
        except Exception as exc:  # damaged pages or a file changed since it was opened
            raise DataError(f"{file}: cannot read row groups {groups[0]}..{groups[-1]} ({first_line(exc)})") from None
        if table.num_rows != rows:
            raise DataError(f"{file}: row groups {groups[0]}..{groups[-1]} hold {table.num_rows} rows, the footer "
                            f"says {rows} (the file changed or is damaged)")
        return table

    def column_max(self, column: str) -> int | None:
        """Maximum of an integer column from the footers' statistics (None when unknown)."""
        best = None
        for file in self.files:
            meta, file_schema = read_parquet_footer(file)
            col = file_schema.get_field_index(column)
            if col < 0:
                return None
            for rg in range(meta.num_row_groups):
                column_meta = meta.row_group(rg).column(col)
                if column_meta.path_in_schema != column:
                    return None
                stats = column_meta.statistics
                if stats is None or not stats.has_min_max:
                    return None
                best = stats.max if best is None else max(best, stats.max)
        return best


@dataclass(frozen=True)
class CsvSource:
    """A large CSV file split at line boundaries into byte ranges (no newlines inside quoted fields)."""

    file: str
    schema: Any
    header: bytes
    chunks: tuple[tuple[int, int, int], ...]  # (rows, start byte, end byte)

    @classmethod
    def open(cls, path: Path, rows_per_chunk: int, block_bytes: int = 1 << 24) -> CsvSource:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        with open(path, "rb") as fh:
            header = fh.readline()
            if not header.strip():
                raise DataError(f"{path}: the file is empty")
            start = pos = fh.tell()
            rows, chunks = 0, []
            while True:
                block = fh.read(block_bytes)
                if not block:
                    break
                offset = 0
                while True:
                    nl = block.find(b"\n", offset)
                    if nl < 0:
                        break
                    rows += 1
                    offset = nl + 1
                    if rows == rows_per_chunk:
                        end = pos + offset
                        chunks.append((rows, start, end))
                        start, rows = end, 0
                pos += len(block)
                tail = block[-1:]
            if pos > start:
                rows += 0 if tail == b"\n" else 1
                if rows:
                    chunks.append((rows, start, pos))
        if not chunks:
            raise DataError(f"{path}: the pool is empty (a header but no rows)")
        # Column types from the first rows, read by pyarrow's own type inference.
        probe = pcsv.read_csv(pa.py_buffer(header + cls._slice(path, chunks[0][1], min(chunks[0][2], chunks[0][1] + (1 << 20)))))
        return cls(str(path), probe.schema, header, tuple(chunks))

    @staticmethod
    def _slice(path: Any, start: int, end: int) -> bytes:
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
        cut = data.rfind(b"\n")
        return data if cut < 0 or end - start < (1 << 20) else data[:cut + 1]

    def read(self, chunk: int, columns: list[str]) -> Any:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        rows, start, end = self.chunks[chunk]
        with open(self.file, "rb") as fh:
            fh.seek(start)
            body = fh.read(end - start)
        types = {c: self.schema.field(c).type for c in columns}
        for c, t in types.items():
            if pa.types.is_null(t):  # empty in the first rows: read as text, missing where empty
                types[c] = pa.string()
        try:
            table = pcsv.read_csv(pa.py_buffer(self.header + body),
                                  convert_options=pcsv.ConvertOptions(include_columns=columns, column_types=types))
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise DataError(f"{self.file}: bytes {start}..{end} cannot be read as CSV ({first_line(exc)})") from None
        if table.num_rows != rows:
            raise DataError(f"{self.file}: rows {start}..{end} bytes hold {table.num_rows} rows, expected {rows} "
                            "(quoted fields with newlines are not supported in large CSV files)")
        return table

    def where(self, chunk: int) -> str:
        """The file a chunk is read from."""
        return self.file

    def column_max(self, column: str) -> int | None:
        return None
