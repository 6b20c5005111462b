"""``estimate --by`` over many small groups (issue 23): every method vectorised over the groups.

The frequentist intervals of all groups are computed at once (:func:`classical_intervals`,
:func:`ppi_mean_intervals`) and must equal the group-by-group functions; the Bayesian fast path
solves its region offsets through the arrow-shaped Hessian (test_regional.py) and finishes many
regions in chunks, which must agree with finishing them at once to Monte Carlo error.
"""

import warnings

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.estimation import bayes as bayes_module
from pbassess.estimation import estimate
from pbassess.estimation.bayes import bayes_estimate, cell_counts
from pbassess.estimation.frequentist import (
    classical_interval,
    classical_intervals,
    ppi_mean_interval,
    ppi_mean_intervals,
)


def _pool(n_items=1500, n_groups=300, n_labels=400, seed=0):
    """Groups of 1-12 items: one-item groups, fully labeled groups, unlabeled groups, all-correct groups."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.55, 1.0, n_items)
    truth = np.where(rng.random(n_items) < conf, 0, 1)
    group = np.sort(rng.integers(0, n_groups, n_items))
    group[:40] = np.arange(40) // 2 + n_groups                       # 20 groups of two items, all labeled
    labeled = np.zeros(n_items, dtype=bool)
    labeled[rng.choice(n_items, n_labels, replace=False)] = True
    labeled[:40] = True
    labels = np.where(labeled, truth, -1)
    names = np.array([f"g{g:04d}" for g in group])
    return Predictions.from_top1(np.zeros(n_items, int), conf, labels, classes=["a", "b"], groups={"A": names})


def _loop(pool, methods, metric="accuracy", ci_prob=0.9):
    """The group-by-group reference: the scalar functions on each group's items (the code before 0.x)."""
    from pbassess.estimation.items import item_statistic, region_codes

    stat = item_statistic(metric)
    codes, groups = region_codes(pool, "A")
    labeled = pool.labeled
    f_all = stat.predicted(pool)
    y_all = np.full(pool.n_items, np.nan)
    y_all[labeled] = stat.observed(pool, np.flatnonzero(labeled))
    kinds = {"classical": "auto", "wald": "wald", "wilson": "wilson"}
    out = np.full((len(methods), len(groups), 3), np.nan)
    for g in range(len(groups)):
        lab, unl = (codes == g) & labeled, (codes == g) & ~labeled
        for i, m in enumerate(methods):
            if m in kinds:
                out[i, g] = classical_interval(y_all[lab], ci_prob, kinds[m])
            elif not unl.any() or lab.sum() < 2:
                out[i, g] = classical_interval(y_all[lab], ci_prob, "auto" if m == "ppi" else "wald")
            else:
                out[i, g] = ppi_mean_interval(y_all[lab], f_all[lab], f_all[unl], ci_prob,
                                              kind="auto" if m == "ppi" else "wald")[:3]
    return out


@pytest.mark.parametrize("metric, methods", [("accuracy", ["classical", "wald", "wilson", "ppi", "ppi-wald"]),
                                             ("brier", ["classical", "wald", "ppi", "ppi-wald"])])
def test_vectorised_groups_equal_the_group_by_group_loop(metric, methods):
    pool = _pool()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)          # groups without an interval are warned about
        post = estimate(pool, by="A", metric=metric, methods=methods, ci_prob=0.9).posterior
    ref = _loop(pool, methods, metric)
    for i, m in enumerate(methods):
        for j, v in enumerate(("mean", "lower", "upper")):
            got = post[v].sel(estimator=m).to_numpy()
            np.testing.assert_allclose(got, ref[i, :, j], rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=f"{m} {v}")
    # the case mix the loop covers: NaN (no labels / one label), bounds at 1, interior intervals
    lower = post["lower"].sel(estimator="classical").to_numpy()
    assert np.isnan(lower).any() and np.isfinite(lower).sum() > 100


def test_classical_and_ppi_intervals_of_many_groups_equal_one_group_at_a_time():
    rng = np.random.default_rng(5)
    n_groups = 60
    y = (rng.random(900) < 0.9).astype(float)
    g = rng.integers(0, n_groups, 900)
    for kind in ("auto", "wald", "wilson", "agresti-coull", "exact"):
        many = np.stack(classical_intervals(y, g, n_groups + 2, 0.8, kind), axis=-1)   # two empty groups
        one = np.array([classical_interval(y[g == j], 0.8, kind) for j in range(n_groups + 2)])
        np.testing.assert_allclose(many, one, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=kind)
    f, fu, gu = rng.uniform(0.6, 1, 900), rng.uniform(0.6, 1, 5000), rng.integers(0, n_groups, 5000)
    for kind in ("auto", "wald"):
        many = np.stack(ppi_mean_intervals(y, f, g, fu, gu, n_groups, 0.8, kind), axis=-1)
        one = np.array([ppi_mean_interval(y[g == j], f[g == j], fu[gu == j], 0.8, kind=kind) for j in range(n_groups)])
        np.testing.assert_allclose(many, one, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=kind)


def test_bayes_regions_finished_in_chunks_agree_with_all_at_once(monkeypatch):
    """Chunks change only which random numbers each region gets: means agree within 5 Monte Carlo sd
    (a region's posterior sd / sqrt(4,000 draws), times sqrt 2 for the difference of two estimates)."""
    rng = np.random.default_rng(2)
    n = 3000
    conf = rng.uniform(0.6, 1.0, n)
    correct = rng.random(n) < conf
    region = rng.integers(0, 50, n)
    labeled = rng.random(n) < 0.1
    cells = cell_counts(conf, region, 50, labeled, correct, bins=4)
    whole = bayes_estimate(cells, seed=0)
    monkeypatch.setattr(bayes_module, "_CHUNK_ELEMENTS", 4000 * 17)      # about four regions per chunk
    chunked = bayes_estimate(cells, seed=0)
    assert whole["draws"] is not None and chunked["draws"] is None
    sd = whole["draws"].std(axis=0)
    assert np.all(np.abs(chunked["mean"] - whole["mean"]) <= 5 * np.sqrt(2) * sd / np.sqrt(4000))
    # a region's pool accuracy moves in steps of 1 / its size (about 60 items): the 5% and 95% quantiles
    # of 4,000 draws move by at most two steps (quantile sd ~ 0.4 steps here)
    size = np.bincount(region, minlength=50)[:, None]
    assert np.all(np.abs(chunked["ci"] - whole["ci"]) <= 2.01 / size)


# ----------------------------------------------------------------------------- issue 23: edges of every path
def test_every_interval_lies_in_0_1_and_the_estimate_inside_it():
    """One error in 20 labels: the Wald and PPI++ CLT upper bounds are 0.95 + 1.645 * 0.049 = 1.03
    before clipping (1.0197 was seen in the issue); every method, per region and overall, stays in [0, 1]."""
    rng = np.random.default_rng(1)
    n = 2000
    conf = rng.uniform(0.9, 1.0, n)
    region = np.where(np.arange(n) < 1000, "a", "b")
    labels = np.full(n, -1)                                  # class 0 = predicted: correct
    labels[:20] = 0
    labels[0] = 1                                            # one error among region a's 20 labels
    labels[1000:1040] = 0
    labels[1000:1015] = 1                                    # region b: 25 of 40 correct (interior)
    p = Predictions.from_top1(np.zeros(n, int), conf, labels, classes=["a", "b"], groups={"r": region})
    for by in (None, "r"):
        post = estimate(p, by=by, methods="classical,wald,wilson,ppi,ppi-wald,bayes", ci_prob=0.9, seed=0).posterior
        lo, hi, mean = (post[v].to_numpy() for v in ("lower", "upper", "mean"))
        assert np.all((lo >= 0) & (hi <= 1) & (lo < hi)), (by, lo, hi)
        assert np.all((mean >= 0) & (mean <= 1))
    wald_a = post["upper"].sel(estimator="wald", group="a")
    assert float(wald_a) == 1.0                              # the bound that was 1.03 is clipped


def test_no_interval_is_said_in_words_in_json_and_sentence(capsys):
    """One-item groups and groups without labels: NaN bounds (null in JSON) with the reason beside them."""
    import json

    from pbassess.cli import main
    from pbassess.estimation.api import EstimationResult

    p = Predictions.from_top1([0] * 6, [.9, .8, .7, .6, .9, .8], [0, 1, 0, -1, -1, -1], classes=["a", "b"],
                              groups={"g": ["x", "x", "y", "y", "z", "z"]})
    with pytest.warns(UserWarning, match="no interval"):
        res = estimate(p, by="g", methods="wald,classical,ppi")
    obj = res.to_json()
    assert obj["methods"]["wald"]["ci"][2] == [pytest.approx(np.nan, nan_ok=True)] * 2
    assert obj["methods"]["wald"]["reason"] == [None, "one labeled item", "no labeled items"]
    assert obj["methods"]["classical"]["reason"] == [None, None, "no labeled items"]
    assert isinstance(res, EstimationResult)
    one = Predictions.from_top1([0] * 4, [.9, .8, .7, .6], [0, -1, -1, -1], classes=["a", "b"])
    with pytest.warns(UserWarning):
        sentence = estimate(one, methods="wald").sentence()
    assert "no interval: one labeled item" in sentence and "nan" not in sentence
    # the CLI: null bounds and the reason in --json, the sentence in words
    path = _write_csv(p)
    assert main(["estimate", str(path), "--by", "g", "--method", "wald", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["methods"]["wald"]["ci"][2] == [None, None]
    assert out["methods"]["wald"]["reason"][2] == "no labeled items"


def _write_csv(pool):
    import tempfile
    from pathlib import Path

    import pandas as pd

    folder = Path(tempfile.mkdtemp())
    frame = pd.DataFrame({"label": [pool.classes[v] if v >= 0 else "" for v in pool.labels],
                          "p_a": pool.confidence, "p_b": 1 - pool.confidence, "g": pool.groups["g"]})
    frame.to_csv(folder / "pool.csv", index=False)
    return folder / "pool.csv"
