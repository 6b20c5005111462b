"""Write assessment results to a folder: figures (PNG), netCDF files and a markdown report.

Used by ``pbassess assess`` (one result) and ``pbassess demo`` (accuracy, calibration and
cost of the built-in data). Nothing here computes statistics: every number comes from a
result object's ``summary()``/``sentence()`` and every figure from the plot functions of
:mod:`pbassess.plots`.

Examples
--------
>>> import tempfile
>>> from pbassess import load_data
>>> from pbassess.assess.accuracy import assess_accuracy
>>> from pbassess.report import save_result, write_report
>>> res = assess_accuracy(load_data(), draws=500, seed=0)
>>> out = tempfile.mkdtemp()
>>> files = save_result(res, out)
>>> files["figures"][0].name, files["netcdf"].name
('accuracy.png', 'accuracy.nc')
>>> write_report({"accuracy": res}, out, saved={"accuracy": files}).name
'report.md'
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pbassess._atomic import atomic_path, atomic_write_bytes

__all__ = ["FIGURES", "as_figure", "markdown_table", "save_figures", "save_result", "write_report"]

#: Figures written for each metric: (file stem, plotting module, function). The first is the
#: metric's main figure (the one ``result.plot()`` draws).
FIGURES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "accuracy": (
        ("accuracy", "pbassess.plots.accuracy", "plot_accuracy"),
        ("accuracy-p-lowest", "pbassess.plots.accuracy", "plot_p_extreme"),
        ("accuracy-ranks", "pbassess.plots.accuracy", "plot_rank_intervals"),
    ),
    "calibration": (
        ("calibration-reliability", "pbassess.plots.calibration", "plot_reliability"),
        ("calibration-ece", "pbassess.plots.calibration", "plot_ece"),
        ("calibration-classwise-ece", "pbassess.plots.calibration", "plot_classwise_ece"),
    ),
    "cost": (
        ("cost-confusion", "pbassess.plots.cost", "plot_confusion"),
        ("cost-expected", "pbassess.plots.cost", "plot_expected_cost"),
    ),
}

_TITLES = {"accuracy": "Accuracy by predicted class", "calibration": "Calibration", "cost": "Misclassification cost"}


def as_figure(obj: Any):
    """The matplotlib Figure behind what a plot function returned (Figure, Axes or array of Axes).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> as_figure(ax) is fig, as_figure([ax]) is fig
    (True, True)
    """
    from matplotlib.figure import Figure

    if isinstance(obj, Figure):
        return obj
    if hasattr(obj, "get_figure"):
        return obj.get_figure()
    if hasattr(obj, "flat"):  # numpy array of Axes
        return next(iter(obj.flat)).get_figure()
    if isinstance(obj, (list, tuple)) and obj:
        return as_figure(obj[0])
    raise TypeError(f"a plot function returned {type(obj).__name__}, not a matplotlib Figure or Axes")


def _applies(result: Any, stem: str) -> bool:
    """Whether a figure applies to this result (classwise ECE needs the classwise part)."""
    if stem == "calibration-classwise-ece":
        return bool(getattr(result, "has_classwise", False))
    return True


def save_figures(result: Any, out_dir: str | os.PathLike, *, prefix: str = "", dpi: int = 120) -> list[Path]:
    """Draw every figure of the result's metric and write them as PNG files.

    Parameters
    ----------
    result : AssessmentResult
        An accuracy, calibration or cost result.
    out_dir : path
        The folder (created when missing).
    prefix : str
        Put before each file name (e.g. ``"digits-"``).
    dpi : int
        Resolution of the PNG files.

    Returns
    -------
    list of Path
        The files written, main figure first.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_accuracy
    >>> res = assess_accuracy(Predictions.from_top1(["a", "a", "b"], [0.9, 0.8, 0.7], ["a", "b", "b"]), seed=0)
    >>> [f.name for f in save_figures(res, tempfile.mkdtemp(), prefix="demo-")]
    ['demo-accuracy.png', 'demo-accuracy-p-lowest.png', 'demo-accuracy-ranks.png']
    """
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, module_name, func_name in FIGURES.get(result.metric, ()):
        if not _applies(result, stem):
            continue
        func = getattr(importlib.import_module(module_name), func_name)
        fig = as_figure(func(result))
        path = out / f"{prefix}{stem}.png"
        try:
            with atomic_path(path) as tmp:
                fig.savefig(tmp, dpi=dpi, bbox_inches="tight")
        finally:
            plt.close(fig)
        written.append(path)
    return written


def save_result(result: Any, out_dir: str | os.PathLike, *, prefix: str = "", figures: bool = True) -> dict[str, Any]:
    """Save a result as ``<prefix><metric>.nc`` and its figures in ``out_dir``.

    Returns
    -------
    dict
        ``{"netcdf": Path, "figures": [Path, ...]}``.

    Examples
    --------
    >>> import tempfile
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_accuracy
    >>> res = assess_accuracy(Predictions.from_top1(["a", "a", "b"], [0.9, 0.8, 0.7], ["a", "b", "b"]), seed=0)
    >>> saved = save_result(res, tempfile.mkdtemp(), figures=False)
    >>> saved["netcdf"].name, saved["figures"]
    ('accuracy.nc', [])
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    netcdf = result.save(out / f"{prefix}{result.metric}.nc")
    return {"netcdf": Path(netcdf), "figures": save_figures(result, out, prefix=prefix) if figures else []}


def _cell(value: Any, floatfmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"):
        return f"{int(value):,}"
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f"):
        v = float(value)
        return "–" if math.isnan(v) else format(v, floatfmt)
    return str(value).replace("|", "\\|")


def markdown_table(frame: Any, *, floatfmt: str = ".3f", max_rows: int | None = None) -> str:
    """A pandas DataFrame or Series as a GitHub markdown table (index as the first column).

    Examples
    --------
    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"n": [3, 4], "mean": [0.5, float("nan")]},
    ...                                   index=pd.Index(["a", "b"], name="class"))))
    | class | n | mean |
    | --- | ---: | ---: |
    | a | 3 | 0.500 |
    | b | 4 | – |
    """
    import pandas as pd

    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    index_name = frame.index.name or ""
    header = [str(index_name), *(str(c) for c in frame.columns)]
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |",
             "| --- | " + " | ".join("---:" if n else "---" for n in numeric) + " |"]
    rows = list(frame.itertuples(index=True, name=None))
    shown = rows if max_rows is None or len(rows) <= max_rows else rows[:max_rows]
    for row in shown:
        lines.append("| " + " | ".join([_cell(row[0], floatfmt), *(_cell(v, floatfmt) for v in row[1:])]) + " |")
    if len(shown) < len(rows):
        lines.append(f"| ... {len(rows) - len(shown)} more rows | " + " | ".join("" for _ in frame.columns) + " |")
    return "\n".join(lines)


def _tables(result: Any) -> list[tuple[str, Any]]:
    """The tables a report shows for one result: (caption, DataFrame)."""
    tables = [("Summary", result.summary())]
    if result.metric == "calibration":
        ece = result.ece_summary().to_frame().T  # one row: mean, sd, HDI, frequentist, n_labeled
        ece = ece.astype({"n_labeled": int}) if "n_labeled" in ece else ece
        ece.index = ["ECE"]
        tables.insert(0, ("Expected calibration error", ece))
        if getattr(result, "has_classwise", False):
            tables.append(("Classwise calibration (by predicted class)", result.classwise_summary()))
    return tables


def write_report(
    results: Mapping[str, Any],
    out_dir: str | os.PathLike,
    *,
    saved: Mapping[str, Mapping[str, Any]] | None = None,
    title: str = "pbassess report",
    intro: str = "",
    filename: str = "report.md",
) -> Path:
    """Write a markdown report: per result its sentence, tables and links to its figures.

    Parameters
    ----------
    results : mapping of str to AssessmentResult
        Section name to result, in the order to show.
    out_dir : path
        The folder of the report (figure links are relative to it).
    saved : mapping, optional
        Section name to the dict :func:`save_result` returned (netCDF path, figures).
    title, intro : str
        The report's heading and an opening paragraph (markdown).
    filename : str
        Name of the report file.

    Returns
    -------
    Path
        The report file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_accuracy
    >>> res = assess_accuracy(Predictions.from_top1(["a", "a", "b"], [0.9, 0.8, 0.7], ["a", "b", "b"]), seed=0)
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> report = write_report({"accuracy": res}, out, saved={"accuracy": save_result(res, out)}, title="Demo")
    >>> text = report.read_text()
    >>> text.splitlines()[0], "![accuracy](accuracy.png)" in text, "accuracy.nc" in text
    ('# Demo', True, True)
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    saved = saved or {}
    parts = [f"# {title}", ""]
    if intro:
        parts += [intro.strip(), ""]
    parts += ["## Findings", ""]
    parts += [f"- **{_TITLES.get(r.metric, name)}**: {r.sentence()}" for name, r in results.items()]
    parts.append("")
    for name, result in results.items():
        parts += [f"## {_TITLES.get(result.metric, name)}", "", result.sentence(), ""]
        engine = f"Inference: {getattr(result, 'inference', result.engine)}; prior: " + ", ".join(
            f"{k} {v}" for k, v in result.prior.items())
        parts += [engine + f"; credible mass {result.ci_prob:g}.", ""]
        for caption, table in _tables(result):
            parts += [f"**{caption}**", "", markdown_table(table, max_rows=40), ""]
        files = saved.get(name, {})
        for fig in files.get("figures", []):
            rel = os.path.relpath(fig, out)
            parts += [f"![{Path(fig).stem}]({Path(rel).as_posix()})", ""]
        if files.get("netcdf"):
            rel = Path(os.path.relpath(files["netcdf"], out)).as_posix()
            parts += [f"Posterior draws: [`{rel}`]({rel}) "
                      f"(`pbassess.results.AssessmentResult.load(\"{rel}\")`).", ""]
    path = out / filename
    atomic_write_bytes(path, "\n".join(parts).rstrip() + "\n")
    return path
