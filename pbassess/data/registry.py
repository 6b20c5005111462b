"""The model zoo: named prediction sets, built in or downloaded with checksums.

Each entry lives in a folder of the project's ``models/`` directory (shipped inside the
wheel as ``pbassess/_zoo``) with a ``card.json``::

    {
      "name": "cifar100-resnet110",            # the registered name
      "task": "...", "provenance": "...", "citation": "...", "license": "...",
      "classes": 100,                          # number of classes (or a list of names)
      "format": "top1-text",                   # a reader of pbassess.data.readers
      "file": "predictions.csv",               # EITHER a file beside the card (built in)
      "source": {                              # OR a download recipe
        "url": "https://...",
        "sha256": "...",                       # of the uncompressed content
        "mirror_path": "cifar100_resnet110/predictions.txt"
      },
      "reader_options": {"threshold": 0.5},    # passed to the reader
      "default": true                          # the built-in default data set
    }

:func:`load_data` finds a downloadable set in this order: the local mirror folder named by
the environment variable ``PBASSESS_DATA_DIR`` (the file itself or its ``.gz``), the user
cache (``PBASSESS_CACHE_DIR``, default ``~/.cache/pbassess``), then a download with a progress
bar whose sha256 is verified before the file is kept.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pbassess.constants import DATA_DIR_ENV
from pbassess.data.download import cache_dir, download_file, sha256_of_content
from pbassess.data.predictions import Predictions
from pbassess.data.readers import read_predictions
from pbassess.errors import DataError

__all__ = ["ModelCard", "default_name", "list_models", "load_data", "model_card", "registered_cards", "resolve_path",
           "zoo_dir"]


def zoo_dir() -> Path:
    """The folder holding the model cards (the repository's ``models/`` or the wheel's copy).

    Examples
    --------
    >>> (zoo_dir() / "digits-logreg" / "card.json").exists()
    True
    """
    override = os.environ.get("PBASSESS_MODELS_DIR")
    candidates = [Path(override)] if override else []
    here = Path(__file__).resolve().parent.parent
    candidates += [here / "_zoo", here.parent / "models"]
    for c in candidates:
        if c.is_dir():
            return c
    raise DataError("the model zoo folder was not found (set PBASSESS_MODELS_DIR)")


@dataclass(frozen=True)
class ModelCard:
    """The card of one registered prediction set.

    Examples
    --------
    >>> card = model_card("digits-logreg")
    >>> isinstance(card, ModelCard), card.builtin, card.to_dict()["task"].split(",")[0]
    (True, True, 'Handwritten digits')
    """

    name: str
    folder: Path
    task: str
    format: str
    classes: Any
    provenance: str = ""
    citation: str = ""
    license: str = ""
    file: str | None = None
    source: dict[str, Any] | None = None
    reader_options: dict[str, Any] = field(default_factory=dict)
    default: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def builtin(self) -> bool:
        """Whether the predictions ship with the project (no download)."""
        return self.file is not None

    def to_dict(self) -> dict[str, Any]:
        """The card as a JSON-able dict."""
        return {
            "name": self.name, "task": self.task, "format": self.format, "classes": self.classes,
            "provenance": self.provenance, "citation": self.citation, "license": self.license,
            "builtin": self.builtin, "file": self.file, "source": self.source,
            "reader_options": self.reader_options, "default": self.default, **self.extra,
        }


@lru_cache(maxsize=1)
def registered_cards() -> dict[str, ModelCard]:
    """Every card of the model zoo by name, read once (``registered_cards.cache_clear()`` re-reads the folder).

    Examples
    --------
    >>> "digits-logreg" in registered_cards()
    True
    """
    cards: dict[str, ModelCard] = {}
    root = zoo_dir()
    for path in sorted(root.glob("*/card.json")):
        try:
            raw = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: invalid JSON ({exc})") from None
        known = {"name", "task", "format", "classes", "provenance", "citation", "license", "file", "source",
                 "reader_options", "default"}
        card = ModelCard(
            name=raw["name"], folder=path.parent, task=raw.get("task", ""), format=raw["format"],
            classes=raw.get("classes"), provenance=raw.get("provenance", ""), citation=raw.get("citation", ""),
            license=raw.get("license", ""), file=raw.get("file"), source=raw.get("source"),
            reader_options=raw.get("reader_options", {}), default=bool(raw.get("default", False)),
            extra={k: v for k, v in raw.items() if k not in known},
        )
        cards[card.name] = card
    return cards


def list_models() -> list[ModelCard]:
    """All registered prediction sets, built-in default first.

    Returns
    -------
    list of ModelCard
        One card per registered prediction set (name, description, source, ...).

    Examples
    --------
    >>> names = [c.name for c in list_models()]
    >>> "cifar100-resnet110" in names and "svhn-resnet" in names
    True
    """
    return sorted(registered_cards().values(), key=lambda c: (not c.default, not c.builtin, c.name))


def default_name() -> str:
    """Name of the built-in default prediction set.

    Examples
    --------
    >>> default_name()
    'digits-logreg'
    """
    for card in registered_cards().values():
        if card.default:
            return card.name
    raise DataError("no built-in default data set is registered in models/")


def model_card(name: str) -> ModelCard:
    """The card of a registered name, with a clear error for unknown names.

    Parameters
    ----------
    name : str
        A registered name (:func:`list_models`).

    Returns
    -------
    ModelCard

    Examples
    --------
    >>> card = model_card("digits-logreg")
    >>> card.format, card.classes, card.builtin
    ('pbassess-csv', 10, True)
    >>> model_card("no-such-set")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: unknown data set 'no-such-set' (registered: ...)
    """
    cards = registered_cards()
    if name not in cards:
        raise DataError(f"unknown data set {name!r} (registered: {', '.join(sorted(cards))})")
    return cards[name]


def resolve_path(name: str, *, download: bool = True, verify: bool = False) -> Path:
    """The local file behind a registered name, downloading it when needed.

    Parameters
    ----------
    name : str
        A registered name (see :func:`list_models`).
    download : bool, default True
        Allow a download when neither the mirror nor the cache has the file.
    verify : bool, default False
        Check the sha256 of a mirrored or cached file too (downloads are always checked).

    Examples
    --------
    >>> resolve_path("digits-logreg").name
    'predictions.csv'
    """
    card = model_card(name)
    if card.file is not None:
        path = card.folder / card.file
        if not path.exists():
            raise DataError(f"built-in predictions of {name!r} are missing: {path}")
        return path
    source = card.source or {}
    rel = source.get("mirror_path") or Path(source["url"]).name
    candidates = []
    mirror = os.environ.get(DATA_DIR_ENV)
    if mirror:
        candidates += [Path(mirror) / rel, Path(mirror) / f"{rel}.gz"]
    cache = cache_dir() / rel
    candidates += [cache, Path(f"{cache}.gz")]
    for path in candidates:
        if path.exists():
            if verify and sha256_of_content(path) != source["sha256"]:
                raise DataError(f"{path}: checksum does not match the recipe of {name!r}")
            return path
    if not download:
        raise DataError(f"{name!r} is not available locally (set {DATA_DIR_ENV} to a mirror or allow the download)")
    return download_file(source["url"], cache, source["sha256"])


def load_data(name: str | os.PathLike | None = None, **options: Any) -> Predictions:
    """Load a registered prediction set by name, or any prediction file by path.

    Parameters
    ----------
    name : str or path, optional
        A registered name (default: the built-in default) or a file path.
    **options
        Reader options overriding the card's, e.g. ``model="score_LR"``, ``threshold=0.3``.

    Returns
    -------
    Predictions

    Examples
    --------
    >>> from pbassess import load_data
    >>> p = load_data()
    >>> p.n_classes, p.n_labeled == p.n_items
    (10, True)
    """
    if name is None:
        name = default_name()
    name_str = os.fspath(name)
    if name_str not in registered_cards():
        path = Path(name_str)
        if path.exists():
            return read_predictions(path, **options)
        raise DataError(f"{name_str!r} is neither a file nor a registered data set "
                        f"(registered: {', '.join(sorted(registered_cards()))})")
    card = model_card(name_str)
    if card.format == "acs-employment-parquet":  # three Parquet files joined on id (SURFACE)
        from pbassess.data.acs import load_acs_employment

        return load_acs_employment(card, **options)
    path = resolve_path(name_str)
    opts = {**card.reader_options, **{k: v for k, v in options.items() if v is not None}}
    classes_file = opts.pop("classes_file", None)
    if classes_file and "classes" not in opts:
        opts["classes"] = _class_names(card, classes_file)
    opts.setdefault("name", card.name)
    return read_predictions(path, format=card.format, **opts)


def _class_names(card: ModelCard, classes_file: str) -> list[str]:
    """Class names from a JSON file beside the card (``{"classes": [...]}`` or a list)."""
    path = card.folder / classes_file
    raw = json.loads(path.read_text())
    return list(raw["classes"] if isinstance(raw, dict) else raw)


def copy_to_cache(name: str, source_path: str | os.PathLike) -> Path:
    """Put a file obtained by other means into the cache after checking its sha256."""
    card = model_card(name)
    if card.source is None:
        raise DataError(f"{name!r} is built in; nothing to cache")
    src = Path(source_path)
    if sha256_of_content(src) != card.source["sha256"]:
        raise DataError(f"{src}: checksum does not match the recipe of {name!r}")
    target = cache_dir() / (card.source.get("mirror_path") or src.name)
    if src.suffix == ".gz":
        target = Path(f"{target}.gz")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, target)
    return target
