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

__all__ = ["CsvSource", "ParquetSource", "TARGET_CHUNK_VALUES"]

#: Values (rows x columns read) per chunk a reader aims at: 2**24 float64 = 128 MiB per column set.
TARGET_CHUNK_VALUES: int = 1 << 24


@dataclass(frozen=True)
class ParquetSource:
    """One Parquet file or a folder of them (read in sorted name order)."""

    files: tuple[str, ...]
    schema: Any
    chunks: tuple[tuple[int, int, tuple[int, ...]], ...]  # (rows, file index, row groups)

    @classmethod
    def open(cls, path: Path, rows_per_chunk: int) -> ParquetSource:
        import pyarrow.parquet as pq

        if path.is_dir():
            files = sorted(str(p) for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".parquet", ".pq"))
            if not files:
                raise DataError(f"{path}: the folder holds no .parquet files")
        else:
            files = [str(path)]
        schema, chunks = None, []
        for index, file in enumerate(files):
            try:
                meta = pq.ParquetFile(file).metadata
                file_schema = pq.read_schema(file)
            except (OSError, ValueError) as exc:
                raise DataError(f"{file}: not a readable Parquet file ({exc})") from None
            if schema is None:
                schema = file_schema
            elif file_schema.names != schema.names:
                raise DataError(f"{file}: its columns differ from those of {files[0]}")
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

    def read(self, chunk: int, columns: list[str]) -> Any:
        import pyarrow.parquet as pq

        _, index, groups = self.chunks[chunk]
        return pq.ParquetFile(self.files[index]).read_row_groups(list(groups), columns=columns)

    def column_max(self, column: str) -> int | None:
        """Maximum of an integer column from the footers' statistics (None when unknown)."""
        import pyarrow.parquet as pq

        best = None
        col = self.schema.get_field_index(column)
        for file in self.files:
            meta = pq.ParquetFile(file).metadata
            for rg in range(meta.num_row_groups):
                stats = meta.row_group(rg).column(col).statistics
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
        table = pcsv.read_csv(pa.py_buffer(self.header + body),
                              convert_options=pcsv.ConvertOptions(include_columns=columns, column_types=types))
        if table.num_rows != rows:
            raise DataError(f"{self.file}: rows {start}..{end} bytes hold {table.num_rows} rows, expected {rows} "
                            "(quoted fields with newlines are not supported in large CSV files)")
        return table

    def column_max(self, column: str) -> int | None:
        return None
