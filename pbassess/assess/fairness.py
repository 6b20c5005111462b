"""Fairness data sets: every classifier's group comparison and one table of them all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.errors import DataError
from pbassess.results.compare import ComparisonResult
from pbassess.stats import as_generator

__all__ = ["fairness_comparisons", "fairness_table", "score_columns"]


def score_columns(data: Any) -> list[str]:
    """The ``score_*`` classifier columns of a registered binary-score set or CSV file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = f.write_text(",sex,y,score_LR,score_NB\\n0,F,1,0.9,0.8\\n")
    >>> score_columns(f)
    ['score_LR', 'score_NB']
    """
    import os
    from pathlib import Path

    import pandas as pd

    from pbassess.data.registry import registered_cards, resolve_path

    name = os.fspath(data)
    path = resolve_path(name) if name in registered_cards() else Path(name)
    if not path.exists():
        raise DataError(f"{name!r} is neither a file nor a registered data set")
    try:
        cols = pd.read_csv(path, nrows=0).columns
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the CSV header ({exc})") from None
    return [str(c) for c in cols if str(c).startswith("score_")]


def fairness_comparisons(
    data: Any,
    by: str,
    *,
    models: Sequence[str] | None = None,
    metric: str = "accuracy",
    rope: float = 0.02,
    groups: Sequence[str] | None = None,
    seed: Any = None,
    **options: Any,
) -> dict[str, ComparisonResult]:
    """Group comparison of every classifier of a fairness data set (one result per classifier).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
    >>> pairs = [("F", 1), ("F", 0), ("M", 1), ("M", 0)] * 25  # NB errs on every negative man
    >>> rows = [f"{i},{s},{y},{0.8 if y else 0.3},{0.8 if y or s == 'M' else 0.3}" for i, (s, y) in enumerate(pairs)]
    >>> _ = f.write_text(",sex,y,score_LR,score_NB\\n" + "\\n".join(rows) + "\\n")
    >>> res = fairness_comparisons(f, "sex", rope=0.05, seed=0)  # or a registered set: ("adult-sex", "sex")
    >>> sorted(res), res["NB"].groups, res["NB"].pairs_summary()["p_greater"].round(2).tolist()
    (['LR', 'NB'], ['F', 'M'], [1.0])
    """
    from pbassess.assess.compare import compare_groups
    from pbassess.data.registry import load_data

    rng = as_generator(seed)
    cols = list(models) if models is not None else score_columns(data)
    out = {}
    for col in cols:
        col = col if col.startswith("score_") else f"score_{col}"
        pred = load_data(data, model=col)
        out[col[6:]] = compare_groups(pred, by, metric=metric, rope=rope, groups=groups, seed=rng, **options)
    return out


def fairness_table(comparisons: Mapping[str, ComparisonResult]):
    """One row per classifier and pair of groups: metric per group with HDI, the difference
    with HDI, P(d > 0), the ROPE probabilities and the plain labeled rates (direct counts).

    Parameters
    ----------
    comparisons : mapping of str to ComparisonResult
        One :func:`~pbassess.assess.compare_groups` result per classifier.

    Returns
    -------
    pandas.DataFrame
        One row per classifier and pair of groups.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.assess import compare_groups
    >>> y, sex = np.tile([1, 0], 50), np.repeat(["F", "M"], 50)
    >>> scores = {"LR": np.where(y == 1, 0.8, 0.3), "NB": np.where((y == 1) | (sex == "M"), 0.8, 0.3)}
    >>> t = fairness_table({name: compare_groups(Predictions.from_binary_scores(s, y, groups={"sex": sex}),
    ...                                          "sex", rope=0.05, seed=0) for name, s in scores.items()})
    >>> t[["classifier", "a", "b", "raw_a", "raw_b"]].values.tolist()  # NB errs on every negative man
    [['LR', 'F', 'M', 1.0, 1.0], ['NB', 'F', 'M', 1.0, 0.5]]
    >>> t["p_greater"].round(1).tolist()
    [0.5, 1.0]

    With a fairness data set: ``fairness_table(fairness_comparisons("adult-sex", "sex"))``.
    """
    import pandas as pd

    rows = []
    for clf, res in comparisons.items():
        g = res.group_summary().set_index("group")
        for pair in res.pairs_summary().itertuples():
            a, b = g.loc[pair.a], g.loc[pair.b]
            rows.append({
                "classifier": clf, "metric": res.compared_metric, "a": pair.a, "b": pair.b,
                "mean_a": a["mean"], "hdi_a": (a["hdi_low"], a["hdi_high"]), "n_a": int(a["n"]),
                "mean_b": b["mean"], "hdi_b": (b["hdi_low"], b["hdi_high"]), "n_b": int(b["n"]),
                "raw_a": a["successes"] / a["n"] if a["n"] else np.nan,
                "raw_b": b["successes"] / b["n"] if b["n"] else np.nan,
                "diff_mean": pair.diff_mean, "diff_hdi": (pair.hdi_low, pair.hdi_high),
                "p_greater": pair.p_greater, "rope": res.rope, "p_below": pair.p_below,
                "p_inside": pair.p_inside, "p_above": pair.p_above,
            })
    return pd.DataFrame(rows)


