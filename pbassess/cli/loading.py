"""``DATA`` of every subcommand: a registered data set or a file, read with the binary-score options.

The reader behind the data option group (:func:`pbassess.cli.options.load_data_args`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pbassess.errors import ConfigError, DataError

__all__ = ["LAZY_SUFFIXES", "load_predictions"]

#: Suffixes of data read chunk by chunk (Parquet and Zarr).
LAZY_SUFFIXES = (".parquet", ".pq", ".zarr")


def load_predictions(data: str, *, models: str | None = None, threshold: float | None = None,
                     normalize: bool = False, ties: str | None = None, batch_size: int | None = None,
                     chunk_option: str = "--chunk-size"):
    """Load ``DATA`` (a registered name or a file) with the binary-score options.

    ``batch_size`` is the number of items read per chunk of Parquet or Zarr data (``--chunk-size``;
    ``chunk_option`` is the flag named in an error).

    Returns
    -------
    (Predictions, str)
        The predictions and a short name for the default output folder.

    Examples
    --------
    >>> preds, name = load_predictions("digits-logreg")
    >>> name, preds.n_items
    ('digits-logreg', 899)
    """
    from pbassess.data import registry
    from pbassess.data.readers import detect_format

    registered = data in {c.name for c in registry.list_models()}
    if registered:
        fmt = registry.model_card(data).format
        name = data
    else:
        path = Path(data)
        if not path.exists():
            raise DataError(f"DATA {data!r} is neither a file nor a registered data set (see `pbassess data list`)")
        lazy = path.is_dir() or path.suffix.lower() in LAZY_SUFFIXES  # read chunk by chunk (Parquet, Zarr)
        fmt = "parquet/zarr" if lazy else detect_format(path)
        name = path.name.split(".")[0]
    options: dict[str, Any] = {}
    if fmt == "binary-scores-csv":
        if models is not None:
            if "," in models:
                raise ConfigError(f"--models takes one classifier column, got {models!r} (use `pbassess compare` for several)")
            options["model"] = models if models.startswith("score_") else f"score_{models}"
            name = f"{name}-{options['model'][6:]}"
        if threshold is not None:
            options["threshold"] = threshold
        if ties is not None:
            options["ties"] = ties
    elif models is not None or threshold is not None or ties is not None:
        option = "--models" if models is not None else "--threshold" if threshold is not None else "--ties"
        raise ConfigError(f"{option} applies only to binary-score CSV data; {data!r} is {fmt}")
    if normalize:
        if fmt not in ("label-probs-text", "pbassess-csv"):
            raise ConfigError(f"--normalize applies to files with probability columns; {data!r} is {fmt}")
        options["normalize"] = True
    if batch_size is not None:
        if not str(data).lower().rstrip("/").endswith(LAZY_SUFFIXES):
            raise ConfigError(f"{chunk_option} applies to Parquet or Zarr data read in chunks; {data!r} is {fmt}")
        options["rows_per_chunk"] = batch_size
    return registry.load_data(data, **options), name
