"""The shift table against direct computations, scikit-learn and known truth."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.shift import metrics as M
from pbassess.shift.table import find_ood, shift_records, shift_table, split_models, worsening


def _synthetic(seed=0, n=300):
    """Two models x three levels of growing label noise, plus 100 unlabeled OOD items."""
    rng = np.random.default_rng(seed)
    probs, labels, level, model = [], [], [], []
    for m, sharp in (("sharp", 0.2), ("soft", 1.0)):
        for lv, flip in (("1", 0.05), ("2", 0.2), ("3", 0.4)):
            p = rng.dirichlet(np.full(4, sharp), size=n)
            y = p.argmax(axis=1)
            noisy = rng.random(n) < flip
            y[noisy] = rng.integers(0, 4, size=noisy.sum())
            probs.append(p)
            labels += y.tolist()
            level += [lv] * n
            model += [m] * n
        probs.append(rng.dirichlet(np.ones(4), size=100))
        labels += [None] * 100
        level += ["ood"] * 100
        model += [m] * 100
    return Predictions.from_probs(np.vstack(probs), labels, groups={"severity": level, "method": model})


@pytest.fixture(scope="module")
def table():
    return shift_table(_synthetic(), by="severity", n_draws=500, seed=1)


def test_table_values_equal_direct_computations(table):
    p = _synthetic()
    sev, meth = p.group("severity").astype(str), p.group("method").astype(str)
    for model in ("sharp", "soft"):
        for level in ("1", "2", "3"):
            mask = (sev == level) & (meth == model)
            probs, y = np.asarray(p.probs)[mask], np.asarray(p.labels)[mask]
            cell = table.sel(level=level, model=model)
            d = M.brier_decomposition(probs, y)
            s = M.per_item_stats(probs, y)
            assert float(cell["accuracy"]) == pytest.approx(s["correct"].mean())
            assert float(cell["nll"]) == pytest.approx(s["nll"].mean())
            for key in ("brier", "reliability", "resolution", "uncertainty", "cross"):
                name = "brier" if key == "brier" else f"brier_{key}"
                assert float(cell[name]) == pytest.approx(d[key])
            assert int(cell["n"]) == 300
            assert float(cell["ece"]) == pytest.approx(M.expected_calibration_error(s["confidence"], s["correct"]))


def test_ood_auroc_equals_sklearn(table):
    from sklearn.metrics import roc_auc_score

    p = _synthetic()
    sev, meth = p.group("severity").astype(str), p.group("method").astype(str)
    probs = np.asarray(p.probs)
    for model in ("sharp", "soft"):
        inside = probs[(sev == "2") & (meth == model)].max(axis=1)
        outside = probs[(sev == "ood") & (meth == model)].max(axis=1)
        expected = roc_auc_score(np.r_[np.ones(inside.size), np.zeros(outside.size)], np.r_[inside, outside])
        assert float(table["auroc_ood"].sel(level="2", model=model)) == pytest.approx(expected, abs=1e-12)
        # from the entropy: OOD items as positives scored by their entropy
        ent_in = M.predictive_entropy(probs[(sev == "2") & (meth == model)])
        ent_out = M.predictive_entropy(probs[(sev == "ood") & (meth == model)])
        by_entropy = roc_auc_score(np.r_[np.zeros(ent_in.size), np.ones(ent_out.size)], np.r_[ent_in, ent_out])
        assert float(table["auroc_ood_entropy"].sel(level="2", model=model)) == pytest.approx(by_entropy, abs=1e-12)
    assert table["level"].values.tolist() == ["1", "2", "3"]  # OOD set aside
    assert table["ood_confidence_count"].sum(dim="confidence_bin").values.tolist() == [100, 100]


def test_accuracy_hdi_is_the_exact_beta_hdi(table):
    from pbassess.stats.beta import beta_hdi

    cell = table.sel(level="3", model="soft")
    k = round(float(cell["accuracy"]) * 300)
    np.testing.assert_allclose(cell["accuracy_hdi"].values, beta_hdi(1 + k, 1 + 300 - k), atol=1e-9)
    lo, hi = cell["ece_hdi"].values
    assert lo < float(cell["ece_mean"]) < hi


def test_records_have_the_issue_keys(table):
    rec = shift_records(table)
    assert len(rec) == 6
    keys = {"level", "model", "n", "accuracy", "nll", "brier", "brier_reliability", "brier_resolution",
            "brier_uncertainty", "brier_cross", "ece", "entropy", "auroc_ood", "accuracy_hdi", "ece_hdi"}
    assert keys <= set(rec[0])
    assert rec[0]["brier"] == pytest.approx(rec[0]["brier_reliability"] - rec[0]["brier_resolution"]
                                            + rec[0]["brier_uncertainty"] + rec[0]["brier_cross"])


def test_accuracy_worsens_with_label_noise(table):
    """Known truth: accuracy falls 0.96 -> 0.85 -> 0.7 (flip rates 5, 20, 40 %)."""
    w = worsening(table, "accuracy")
    assert (w["p_monotone"].values > 0.99).all()


def test_one_level_and_one_model_without_columns():
    p = Predictions.from_probs([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]], [0, 1, 1], name="toy")
    ds = shift_table(p, n_draws=0)
    assert ds["level"].values.tolist() == ["all"] and ds["model"].values.tolist() == ["toy"]
    assert "accuracy_hdi" not in ds
    assert float(ds["accuracy"].item()) == pytest.approx(2 / 3)


def test_bad_options_raise_one_line_errors():
    p = _synthetic(n=20)
    with pytest.raises(DataError, match="--by column 'nope' not found"):
        shift_table(p, by="nope", n_draws=0)
    with pytest.raises(ConfigError, match="COLUMN=VALUE"):
        find_ood(p, "corruption")
    with pytest.raises(ConfigError, match="draws must be a whole number"):
        shift_table(p, n_draws=-1)
    with pytest.raises(DataError, match="no item has"):
        find_ood(p, "severity=9")
    with pytest.raises(DataError, match="model 'x' not found"):
        split_models(p, models=["x"])
    top1 = Predictions.from_top1(["a", "b"], [0.9, 0.8], ["a", "a"])
    with pytest.raises(DataError, match="full probability vectors"):
        shift_table(top1, n_draws=0)


def test_level_sums_agree_with_the_counting_layer():
    """Peer check: the counting layer's per-level sums (pbassess.counting.count_cells)."""
    counting = pytest.importorskip("pbassess.counting")
    import pbassess

    p = pbassess.load_data("digits-shift")
    ds = shift_table(p, by="environment", n_draws=0)
    cells = counting.count_cells(p, by=("environment",), item_stats=("brier", "entropy"), labeled_only=True)
    for env in ds["level"].values.tolist():
        c = cells.sel(environment=env)
        row = ds.sel(level=env, model=p.name)
        assert int(row["n"]) == int(c["n"])
        assert float(row["accuracy"]) == pytest.approx(float(c["correct"] / c["n"]), abs=1e-12)
        assert float(row["brier"]) == pytest.approx(float(c["brier_sum"] / c["n"]), abs=1e-12)
        # our entropy softens at 1e-8 (the paper's convention): differences of order 1e-7
        assert float(row["entropy"]) == pytest.approx(float(c["entropy_sum"] / c["n"]), abs=1e-6)


def test_models_with_different_levels_share_one_level_axis():
    a = Predictions.from_probs([[0.9, 0.1], [0.2, 0.8]], [0, 1], groups={"year": ["2015", "2016"]})
    b = Predictions.from_probs([[0.6, 0.4], [0.3, 0.7]], [1, 1], groups={"year": ["2016", "2017"]})
    ds = shift_table({"a": a, "b": b}, by="year", n_draws=50, seed=0)
    assert ds["level"].values.tolist() == ["2015", "2016", "2017"]
    assert np.isnan(float(ds["accuracy"].sel(level="2017", model="a")))
    assert float(ds["accuracy"].sel(level="2016", model="b")) == 0.0
    rec = [r for r in shift_records(ds) if r["model"] == "a" and r["level"] == "2017"][0]
    assert rec["n"] == 0 and rec["accuracy"] is None
