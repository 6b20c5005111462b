"""What an annotator sees of an item: its image, its text, its attribute table.

:class:`ItemViews` finds these for the items of a pool:

- images from an array ``(n_items, height, width)`` (or ``(..., 3)`` RGB) given in memory,
  encoded as PNG on request (:func:`png_bytes`);
- images from a column of file paths relative to the pool file's folder (a path that leaves
  that folder, e.g. with ``../``, is refused: :meth:`ItemViews.image_file`);
- the built-in digits sets (``digits-*``, item ids ``digit-NNNN`` = row of scikit-learn's
  ``load_digits()``): their 8x8 images come from scikit-learn's bundled copy, offline;
- a text column (``text``) and the other columns of the pool file as the attribute table.

Examples
--------
>>> import numpy as np
>>> views = ItemViews(["a", "b"], images=np.zeros((2, 8, 8)))
>>> views.has_image("a"), views.image_png("a")[:8]
(True, b'\\x89PNG\\r\\n\\x1a\\n')
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.errors import DataError

__all__ = ["IMAGE_COLUMNS", "ItemViews", "digits_images", "png_bytes"]

#: Column names taken as image paths (first match), unless one is named.
IMAGE_COLUMNS = ("image", "image_path", "path", "file")
#: Column names taken as the item's text.
TEXT_COLUMNS = ("text", "sentence", "document")
_NOT_ATTRIBUTES = {"item_id", "label", "predicted", "score", "confidence"}
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                ".webp": "image/webp", ".bmp": "image/bmp", ".svg": "image/svg+xml"}


def png_bytes(image: Any, *, scale: int | None = None) -> bytes:
    """Encode a grey ``(h, w)`` or RGB ``(h, w, 3)`` array as PNG, stretched to 0-255, enlarged by pixel repetition.

    Parameters
    ----------
    image : array
    scale : int, optional
        Pixel repetition (default: enough for about 160 pixels on the long side, small images stay crisp).

    Returns
    -------
    bytes

    Examples
    --------
    >>> data = png_bytes(np.eye(2), scale=1)
    >>> data[:8], len(data) > 40
    (b'\\x89PNG\\r\\n\\x1a\\n', True)
    """
    arr = np.asarray(image, dtype=float)
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (3, 4)):
        raise DataError(f"an image must be a (height, width) or (height, width, 3) array, not shape {arr.shape}")
    arr = np.nan_to_num(arr)
    low, high = float(arr.min()), float(arr.max())
    pixels = np.zeros_like(arr) if high <= low else (arr - low) / (high - low)
    if arr.ndim == 2:  # digits and most grey data: dark ink on light paper
        pixels = 1.0 - pixels
    if scale is None:
        scale = max(1, 160 // max(arr.shape[:2]))
    pixels = np.repeat(np.repeat(pixels, scale, axis=0), scale, axis=1)
    data = np.rint(pixels * 255).astype(np.uint8)
    h, w = data.shape[:2]
    color = 0 if data.ndim == 2 else (2 if data.shape[2] == 3 else 6)
    raw = b"".join(b"\x00" + data[r].tobytes() for r in range(h))

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def digits_images(item_ids: Sequence[str]) -> np.ndarray | None:
    """The 8x8 images of scikit-learn's digits for item ids ``digit-NNNN`` (row NNNN), or None if any id differs.

    Examples
    --------
    >>> digits_images(["digit-0000", "digit-0005"]).shape
    (2, 8, 8)
    >>> digits_images(["x"]) is None
    True
    """
    rows = []
    for item in item_ids:
        match = re.fullmatch(r"digit-(\d+)", str(item))
        if match is None:
            return None
        rows.append(int(match.group(1)))
    try:
        from sklearn.datasets import load_digits
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        return None
    images = load_digits().images
    if rows and max(rows) >= images.shape[0]:
        return None
    return images[np.asarray(rows, dtype=np.int64)]


class ItemViews:
    """Images, texts and attributes of a pool's items.

    Parameters
    ----------
    item_ids : sequence of str
        The pool's item ids, in order.
    images : array, optional
        ``(n_items, h, w)`` or ``(n_items, h, w, 3)``: one image per item.
    table : pandas.DataFrame, optional
        The pool file's columns, one row per item (in the order of ``item_ids``).
    root : path, optional
        The folder that image paths are relative to (the pool file's folder); files outside it are refused.
    image_column, text_column : str, optional
        The columns of ``table`` with image paths and texts (default: the first of
        :data:`IMAGE_COLUMNS` / :data:`TEXT_COLUMNS` present).

    Examples
    --------
    >>> import pandas as pd
    >>> views = ItemViews(["a", "b"], table=pd.DataFrame({"text": ["good", "bad"], "site": ["x", "y"]}))
    >>> views.text("b"), views.attributes("b"), views.has_image("b")
    ('bad', {'site': 'y'}, False)
    """

    def __init__(self, item_ids: Sequence[Any], *, images: Any = None, table: Any = None,
                 root: str | os.PathLike | None = None, image_column: str | None = None,
                 text_column: str | None = None) -> None:
        self._index = {str(i): k for k, i in enumerate(item_ids)}
        self._images = None
        if images is not None:
            arr = np.asarray(images)
            if arr.shape[0] != len(self._index) or arr.ndim not in (3, 4):
                raise DataError(f"images must hold one (height, width[, 3]) image per item: shape {arr.shape} does "
                                f"not fit {len(self._index)} items")
            self._images = arr
        self._table = table
        self._root = None if root is None else Path(root).resolve()
        columns = [] if table is None else [str(c) for c in table.columns]
        for name, given in (("image", image_column), ("text", text_column)):
            if given is not None and given not in columns:
                raise DataError(f"the pool has no {name} column {given!r} (columns: {', '.join(columns) or 'none'})")
        self.image_column = image_column or next((c for c in IMAGE_COLUMNS if c in columns), None)
        self.text_column = text_column or next((c for c in TEXT_COLUMNS if c in columns), None)
        if self.image_column is not None and self._root is None:
            raise DataError("image paths need the folder they are relative to (the pool file's folder)")
        skip = _NOT_ATTRIBUTES | {self.image_column, self.text_column}
        self.attribute_columns = [c for c in columns if c not in skip and not re.fullmatch(r"p_.+", c)]

    @classmethod
    def for_pool(cls, pool: Any, source: str | None, *, images: Any = None, image_column: str | None = None,
                 text_column: str | None = None) -> ItemViews:
        """The views of a session's pool: in-memory ``images``, the built-in digits, or the pool file's columns.

        Parameters
        ----------
        pool : Predictions
        source : str, optional
            The pool's file path or registered name (as the session records it).
        images : array, optional
        image_column, text_column : str, optional

        Returns
        -------
        ItemViews

        Examples
        --------
        >>> from pbassess import load_data
        >>> views = ItemViews.for_pool(load_data("digits-logreg"), "digits-logreg")
        >>> views.has_image("digit-0000")
        True
        """
        ids = [str(i) for i in pool.item_ids]
        if images is None and source is not None and str(source).startswith("digits-"):
            images = digits_images(ids)
        table, root = None, None
        path = Path(source) if source is not None else None
        if path is not None and path.suffix.lower() in (".csv", ".tsv", ".parquet") and path.is_file():
            table, root = _read_table(path, ids), path.parent
        return cls(ids, images=images, table=table, root=root, image_column=image_column, text_column=text_column)

    # ------------------------------------------------------------------ per item
    def _row(self, item_id: str) -> int:
        if item_id not in self._index:
            raise DataError(f"unknown item id {item_id!r}")
        return self._index[item_id]

    def has_image(self, item_id: str) -> bool:
        """Whether the item has an image to show."""
        if self._images is not None:
            return True
        return self.image_column is not None and bool(self._cell(item_id, self.image_column))

    def _cell(self, item_id: str, column: str) -> str:
        value = self._table[column].iloc[self._row(item_id)]
        return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)

    def image_png(self, item_id: str) -> bytes:
        """The item's in-memory image as PNG."""
        if self._images is None:
            raise DataError("this pool has no image arrays")
        return png_bytes(self._images[self._row(item_id)])

    def image_file(self, item_id: str) -> tuple[Path, str]:
        """The item's image file and media type; DataError for a path outside the pool's folder or a missing file.

        Examples
        --------
        >>> import pandas as pd, tempfile
        >>> root = tempfile.mkdtemp()
        >>> views = ItemViews(["a"], table=pd.DataFrame({"image": ["../secret.png"]}), root=root)
        >>> views.image_file("a")
        Traceback (most recent call last):
        ...
        pbassess.errors.DataError: the image path of item 'a' leaves the pool's folder
        """
        if self.image_column is None:
            raise DataError("this pool has no image column")
        rel = self._cell(item_id, self.image_column)
        target = (self._root / rel).resolve()
        if Path(rel).is_absolute() or not target.is_relative_to(self._root):
            raise DataError(f"the image path of item {item_id!r} leaves the pool's folder")
        if not target.is_file():
            raise DataError(f"the image of item {item_id!r} is missing: {rel}")
        kind = _IMAGE_TYPES.get(target.suffix.lower())
        if kind is None:
            raise DataError(f"the image of item {item_id!r} is not a known image type: {rel}")
        return target, kind

    def text(self, item_id: str) -> str | None:
        """The item's text (None without a text column)."""
        return None if self.text_column is None else self._cell(item_id, self.text_column)

    def attributes(self, item_id: str) -> dict[str, str]:
        """The item's other columns, as text."""
        return {c: self._cell(item_id, c) for c in self.attribute_columns}


def _read_table(path: Path, ids: list[str]):
    """The pool file's columns, as text, in the order of the pool's item ids (None when they cannot be matched)."""
    import pandas as pd

    try:
        if path.suffix.lower() == ".parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str,
                                keep_default_na=False)
    except Exception:  # noqa: BLE001 - the pool itself was read: without extra columns we show no attributes
        return None
    if "item_id" in frame.columns:
        frame = frame.assign(item_id=frame["item_id"].astype(str)).drop_duplicates("item_id").set_index("item_id")
        if not set(ids) <= set(frame.index):
            return None
        return frame.loc[ids].reset_index()
    if len(frame) != len(ids):
        return None
    return frame
