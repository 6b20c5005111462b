"""The data layer: validation of bad input, the counting/binning code, the readers, the built-in sets.

Every bad input must raise :class:`DataError` with a one-line message naming the problem; the
readers are checked on tiny temporary files of all four formats and on the real releases
(read in place from ``PBASSESS_DATA_DIR``) against the facts in ``../shared/data/README.md``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pbassess import DataError, Predictions, load_data
from pbassess.data.readers import (
    detect_format,
    read_binary_scores_csv,
    read_label_probs_text,
    read_pbassess_csv,
    read_predictions,
    read_top1_text,
)
from pbassess.data.registry import model_card
from pbassess.stats.counts import (
    bin_edges,
    bin_index,
    binned_counts,
    confusion_counts,
    region_counts,
)

MODELS = Path(__file__).resolve().parents[2] / "models"


def raises_one_line(match: str):
    """``pytest.raises(DataError, match=...)`` whose message must also be a single line."""

    class _Check:
        def __enter__(self):
            self._ctx = pytest.raises(DataError, match=match)
            self.info = self._ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self._ctx.__exit__(*exc)
            message = str(self.info.value)
            assert "\n" not in message and message.strip(), f"not a one-line message: {message!r}"
            return handled

    return _Check()


# ----------------------------------------------------------------------------- bad input
def test_probabilities_of_the_wrong_shape_are_rejected():
    with raises_one_line(r"2-D array .* got shape \(3,\)"):
        Predictions.from_probs([0.2, 0.3, 0.5])
    with raises_one_line(r"2-D array .* got shape \(1, 2, 2\)"):
        Predictions.from_probs([[[0.5, 0.5], [0.5, 0.5]]])


def test_labels_of_the_wrong_length_are_rejected():
    with raises_one_line("labels has 3 values for 2 items"):
        Predictions.from_probs([[0.5, 0.5], [0.1, 0.9]], labels=[0, 1, 1])


def test_top1_confidence_of_the_wrong_length_is_rejected():
    with raises_one_line("confidence has 1 values for 2 predictions"):
        Predictions.from_top1(["a", "b"], [0.9])


def test_nan_probabilities_are_rejected_naming_the_row():
    with raises_one_line("row 1 contains NaN or infinity"):
        Predictions.from_probs([[0.5, 0.5], [np.nan, 1.0]])


def test_infinite_probabilities_are_rejected_naming_the_row():
    with raises_one_line("row 0 contains NaN or infinity"):
        Predictions.from_probs([[np.inf, 0.0], [0.5, 0.5]])


def test_nan_confidence_and_scores_are_rejected():
    with raises_one_line("confidence: row 1 is NaN or infinite"):
        Predictions.from_top1(["a", "b"], [0.9, np.nan])
    with raises_one_line("scores: row 2 is NaN or infinite"):
        Predictions.from_binary_scores([0.1, 0.2, np.inf])


def test_negative_probabilities_are_rejected():
    with raises_one_line(r"row 1 has a negative value \(-0.1\)"):
        Predictions.from_probs([[0.5, 0.5], [1.1, -0.1]])


def test_scores_outside_the_unit_interval_are_rejected():
    with raises_one_line(r"scores: row 1 is 1.2, outside \[0, 1\]"):
        Predictions.from_binary_scores([0.3, 1.2])
    with raises_one_line(r"confidence: row 0 is .*outside \[0, 1\]"):
        Predictions.from_top1(["a", "b"], [1.5, 0.9])


def test_rows_not_summing_to_one_are_rejected():
    with raises_one_line("row 1 sums to 0.9, not 1 .*normalize=True"):
        Predictions.from_probs([[0.5, 0.5], [0.3, 0.6]])


def test_normalize_rescales_rows_not_summing_to_one():
    p = Predictions.from_probs([[0.5, 0.5], [0.3, 0.6]], labels=[0, 1], normalize=True)
    np.testing.assert_allclose(p.probs.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(p.probs[1], [1 / 3, 2 / 3])
    assert p.confidence[1] == pytest.approx(2 / 3)
    with raises_one_line("row 0 sums to zero and cannot be normalized"):
        Predictions.from_probs([[0.0, 0.0], [0.3, 0.6]], normalize=True)


def test_labels_outside_the_classes_are_rejected():
    with raises_one_line("labels: row 1 has 5, which is not one of the 3 classes"):
        Predictions.from_probs([[0.2, 0.3, 0.5]] * 2, labels=[0, 5])
    with raises_one_line("labels: row 0 has -3"):
        Predictions.from_probs([[0.2, 0.3, 0.5]] * 2, labels=[-3, 0])


def test_unknown_class_names_are_rejected():
    with raises_one_line("labels: row 2 has 'cow', which is not one of the 2 classes"):
        Predictions.from_probs([[0.4, 0.6]] * 3, labels=["cat", "dog", "cow"], classes=["cat", "dog"])
    with raises_one_line("predicted: row 1 has 'emu'"):
        Predictions.from_top1(["cat", "emu"], [0.9, 0.8], classes=["cat", "dog"])


def test_duplicate_item_ids_are_rejected():
    with raises_one_line("item ids must be unique: 'x' appears 2 times"):
        Predictions.from_probs([[0.4, 0.6]] * 3, item_ids=["x", "y", "x"])


def test_duplicate_class_names_are_rejected():
    with raises_one_line("class names must be unique: 'a' appears twice"):
        Predictions.from_probs([[0.4, 0.6]], classes=["a", "a"])


@pytest.mark.parametrize(
    "build",
    [
        lambda: Predictions.from_probs(np.empty((0, 3))),
        lambda: Predictions.from_top1([], []),
        lambda: Predictions.from_binary_scores([]),
    ],
    ids=["probs", "top1", "binary"],
)
def test_an_empty_pool_is_rejected(build):
    with raises_one_line("the pool is empty"):
        build()


def test_an_empty_selection_is_rejected():
    p = Predictions.from_probs([[0.4, 0.6]])
    with raises_one_line("the selection is empty"):
        p.subset(np.zeros(1, dtype=bool))


def test_one_class_only_is_rejected():
    with raises_one_line("need at least two classes, got 1"):
        Predictions.from_probs([[1.0], [1.0]])
    with raises_one_line("need at least two classes, got 1"):
        Predictions.from_top1(["a", "a"], [1.0, 1.0])


def test_mismatched_class_names_are_rejected():
    with raises_one_line("2 class names given for 3 probability columns"):
        Predictions.from_probs([[0.2, 0.3, 0.5]], classes=["a", "b"])
    with raises_one_line("4 class names given for 3 probability columns"):
        Predictions.from_probs([[0.2, 0.3, 0.5]], classes=["a", "b", "c", "d"])


def test_scores_of_exactly_zero_and_one_are_valid():
    p = Predictions.from_binary_scores([0.0, 1.0, 0.5], [0, 1, 0])
    assert p.predicted.tolist() == [0, 1, 0]  # a tie at the threshold is negative by default
    assert p.confidence.tolist() == [1.0, 1.0, 0.5]
    q = Predictions.from_probs([[1.0, 0.0], [0.0, 1.0]], labels=[0, 0])
    assert q.correct.tolist() == [True, False]
    r = Predictions.from_top1(["a", "b"], [0.0, 1.0])
    assert r.confidence.tolist() == [0.0, 1.0]
    # ...and land in the first and last calibration bins.
    assert bin_index([0.0, 1.0], bin_edges(bins=10)).tolist() == [0, 9]


def test_missing_labels_mean_unlabeled():
    p = Predictions.from_probs([[0.4, 0.6]] * 4, labels=[1, None, np.nan, ""])
    assert p.labeled.tolist() == [True, False, False, False]
    assert p.labels[1:].tolist() == [-1, -1, -1]


def test_a_bad_threshold_is_rejected():
    with raises_one_line("threshold must be strictly between 0 and 1, got 1.0"):
        Predictions.from_binary_scores([0.2, 0.7], threshold=1.0)


def test_non_numeric_probability_columns_are_rejected():
    import pandas as pd

    frame = pd.DataFrame({"p_a": [0.5, "x"], "p_b": [0.5, 0.5]})
    with raises_one_line("probability column 'p_a': row 1 has 'x', not a number"):
        Predictions.from_dataframe(frame)


def test_missing_group_columns_are_rejected():
    p = Predictions.from_probs([[0.4, 0.6]], groups={"site": ["s1"]})
    with raises_one_line("group column 'sex' not found .*available: site"):
        p.group("sex")


# ----------------------------------------------------------------------------- counting and binning
labels_and_regions = st.integers(1, 12).flatmap(
    lambda k: st.tuples(
        st.just(k),
        hnp.arrays(np.int64, st.integers(0, 300), elements=st.integers(0, k - 1)),
    )
)


@settings(max_examples=60, deadline=None)
@given(data=labels_and_regions, seed=st.integers(0, 2**32 - 1))
def test_region_counts_sum_to_the_totals(data, seed):
    k, region = data
    correct = np.random.default_rng(seed).random(region.size) < 0.6
    n, c = region_counts(region, correct, k)
    assert n.shape == c.shape == (k,)
    assert n.sum() == region.size and c.sum() == correct.sum()
    assert np.all((0 <= c) & (c <= n))
    for r in range(k):  # against the definition
        assert n[r] == np.sum(region == r) and c[r] == np.sum(correct[region == r])


unit_scores = hnp.arrays(np.float64, st.integers(1, 300), elements=st.floats(0.0, 1.0))


@settings(max_examples=60, deadline=None)
@given(scores=unit_scores, n_bins=st.integers(1, 25), strategy=st.sampled_from(["uniform", "quantile"]))
def test_bin_edges_cover_the_unit_interval(scores, n_bins, strategy):
    edges = bin_edges(scores, bins=n_bins, strategy=strategy)
    assert edges[0] == 0.0 and edges[-1] == 1.0
    assert np.all(np.diff(edges) > 0)
    assert 2 <= edges.size <= n_bins + 1


@settings(max_examples=60, deadline=None)
@given(scores=unit_scores, n_bins=st.integers(1, 25), strategy=st.sampled_from(["uniform", "quantile"]))
def test_bin_index_is_in_range_monotone_and_consistent_with_the_edges(scores, n_bins, strategy):
    edges = bin_edges(scores, bins=n_bins, strategy=strategy)
    idx = bin_index(scores, edges)
    assert np.all((0 <= idx) & (idx <= edges.size - 2))
    order = np.argsort(scores, kind="stable")
    assert np.all(np.diff(idx[order]) >= 0), "a larger score landed in a lower bin"
    inside = (edges[idx] <= scores) & ((scores < edges[idx + 1]) | ((scores == 1.0) & (idx == edges.size - 2)))
    assert inside.all()


@settings(max_examples=60, deadline=None)
@given(scores=unit_scores, n_bins=st.integers(1, 25))
def test_binned_counts_add_up(scores, n_bins):
    correct = scores > 0.3
    counts = binned_counts(scores, correct, bin_edges(bins=n_bins))
    assert counts["n"].sum() == scores.size and counts["correct"].sum() == correct.sum()
    assert counts["score_sum"].sum() == pytest.approx(scores.sum(), abs=1e-9 * scores.size)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(20, 400),
    n_bins=st.integers(1, 20),
    seed=st.integers(0, 2**32 - 1),
)
def test_equal_mass_bins_hold_nearly_equal_counts(n, n_bins, seed):
    # Distinct scores strictly inside (0, 1): inner edge j sits at order-statistic position
    # j (n - 1) / n_bins (linear interpolation), so a bin spans (n - 1) / n_bins positions and
    # holds its floor or ceiling, i.e. within 1 + 1/n_bins of n / n_bins; an edge that falls
    # exactly on a score may send it either way by rounding, one more item: bound 2.
    scores = np.random.default_rng(seed).permutation(np.linspace(0.001, 0.999, n))
    edges = bin_edges(scores, bins=n_bins, strategy="quantile")
    assert edges.size == n_bins + 1
    sizes = np.bincount(bin_index(scores, edges), minlength=n_bins)
    assert sizes.sum() == n
    assert np.all(np.abs(sizes - n / n_bins) <= 2.0), sizes
    assert sizes.max() - sizes.min() <= 3, sizes


@settings(max_examples=60, deadline=None)
@given(data=labels_and_regions.filter(lambda d: d[0] >= 2), seed=st.integers(0, 2**32 - 1))
def test_confusion_counts_totals(data, seed):
    k, labels = data
    predicted = np.random.default_rng(seed).integers(0, k, size=labels.size)
    cm = confusion_counts(predicted, labels, k)
    assert cm.shape == (k, k) and cm.sum() == labels.size
    np.testing.assert_array_equal(cm.sum(axis=1), np.bincount(predicted, minlength=k))  # rows: predicted
    np.testing.assert_array_equal(cm.sum(axis=0), np.bincount(labels, minlength=k))  # columns: true
    assert np.trace(cm) == np.sum(predicted == labels)


# ----------------------------------------------------------------------------- readers: tiny files
def test_top1_text_reader(tmp_path):
    f = tmp_path / "preds.txt"
    f.write_text("Index Correct Predicted Confidence\n0 cat dog 0.9\n1 dog dog 0.8\n2 cat cat 0.55\n3 NA cat 0.6\n")
    p = read_top1_text(f)
    assert detect_format(f) == "top1-text"
    assert p.classes == ("cat", "dog") and not p.has_probs
    assert p.correct.tolist() == [False, True, True, False] and p.n_labeled == 3
    assert p.confidence.tolist() == [0.9, 0.8, 0.55, 0.6]
    assert p.item_ids.tolist() == [0, 1, 2, 3] and p.name == "preds"  # integer ids stay integers


def test_top1_text_reader_errors(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_text("Index Correct Predicted Confidence\n0 cat dog 0.9\n1 dog dog\n")
    with raises_one_line("line 3 has 3 fields, expected 4"):
        read_top1_text(f)
    f.write_text("Index Correct Predicted Confidence\n0 cat dog high\n")
    with raises_one_line("line 2 has confidence 'high', not a number"):
        read_top1_text(f)
    f.write_text("Index Correct Predicted Confidence\n")
    with raises_one_line("the pool is empty"):
        read_top1_text(f)


def test_label_probs_text_reader_and_gzip(tmp_path):
    f = tmp_path / "svhn_like.txt.gz"
    with gzip.open(f, "wt") as fh:
        fh.write("1 0.1 0.7 0.2\n0 0.6 0.3 0.1\n-1 0.2 0.2 0.6\n")
    assert detect_format(f) == "label-probs-text"
    p = read_label_probs_text(f)
    assert p.n_items == 3 and p.n_classes == 3 and p.n_labeled == 2
    assert p.predicted.tolist() == [1, 0, 2] and p.correct.tolist() == [True, True, False]
    assert p.name == "svhn_like"
    bad = tmp_path / "bad.txt"
    bad.write_text("7 0.5 0.5\n")
    with raises_one_line("row 0 has label 7, outside the classes 0..1"):
        read_label_probs_text(bad)
    bad.write_text("0 0.5\n")
    with raises_one_line("expected a label and at least two probabilities"):
        read_label_probs_text(bad)


def test_binary_scores_csv_reader(tmp_path):
    f = tmp_path / "fair.csv"
    f.write_text(",sex,y,score_LR,score_RF\n11,F,1,0.9,0.4\n12,M,0,0.7,0.1\n13,F,0,0.2,0.5\n")
    assert detect_format(f) == "binary-scores-csv"
    with raises_one_line("several classifiers .*pick one with --models"):
        read_binary_scores_csv(f)
    p = read_binary_scores_csv(f, model="LR")
    assert p.item_ids.tolist() == [11, 12, 13] and list(p.groups) == ["sex"]
    assert p.predicted.tolist() == [1, 1, 0] and p.correct.tolist() == [True, False, True]
    q = read_binary_scores_csv(f, model="score_RF", threshold=0.45)
    assert q.predicted.tolist() == [0, 0, 1]
    inv = read_binary_scores_csv(f, model="LR", invert_labels=True)
    assert inv.labels.tolist() == [0, 1, 1]
    with raises_one_line("classifier column 'score_SVM' not found"):
        read_binary_scores_csv(f, model="SVM")


def test_pbassess_csv_reader_full_and_top1(tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text("item_id,label,p_a,p_b,site\nx,a,0.8,0.2,s1\ny,,0.3,0.7,s2\nz,b,0.45,0.55,s1\n")
    assert detect_format(f) == "pbassess-csv"
    p = read_pbassess_csv(f)
    assert p.classes == ("a", "b") and p.has_probs and list(p.groups) == ["site"]
    assert p.labels.tolist() == [0, -1, 1] and p.correct.tolist() == [True, False, True]
    g = tmp_path / "top1.csv"
    g.write_text("item_id,label,predicted,confidence\n1,a,a,0.9\n2,b,a,0.6\n")
    q = read_predictions(g)
    assert not q.has_probs and q.correct.tolist() == [True, False]


def test_pbassess_csv_reader_normalize(tmp_path):
    f = tmp_path / "unnormalised.csv"
    f.write_text("item_id,label,p_0,p_1\n1,0,2,2\n2,1,1,3\n")
    with raises_one_line("row 0 sums to 4"):
        read_pbassess_csv(f)
    assert read_pbassess_csv(f, normalize=True).confidence.tolist() == [0.5, 0.75]


def test_readers_report_missing_and_unreadable_files(tmp_path):
    with raises_one_line("file not found"):
        read_predictions(tmp_path / "nope.csv")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with raises_one_line("the file is empty"):
        read_predictions(empty)
    prose = tmp_path / "prose.txt"
    prose.write_text("hello world\n")
    with raises_one_line("cannot tell the format"):
        read_predictions(prose)
    with raises_one_line("unknown format 'parquet'"):
        read_predictions(prose, format="parquet")


def test_options_that_do_not_apply_to_the_format_are_a_clear_error():
    from pbassess.errors import PbassessError

    with pytest.raises(PbassessError, match="threshold"):
        load_data("digits-logreg", threshold=0.3)


def test_a_folder_is_not_a_prediction_file(tmp_path):
    with raises_one_line("is a folder"):
        read_predictions(tmp_path)


# ----------------------------------------------------------------------------- built-in sets
def test_builtin_default_is_digits_logreg_and_well_formed():
    p = load_data()
    card = json.loads((MODELS / "digits-logreg" / "card.json").read_text())
    assert p.name == "digits-logreg" and p.n_items == card["n_items"] == 899
    assert p.n_classes == 10 and p.classes == tuple(str(k) for k in range(10))
    assert p.n_labeled == p.n_items and p.has_probs
    np.testing.assert_allclose(p.probs.sum(axis=1), 1.0, atol=1e-6)
    assert np.all(np.abs(p.probs * 1e6 - np.rint(p.probs * 1e6)) < 1e-6), "more than 6 decimals"
    assert p.correct.mean() == pytest.approx(card["published"]["accuracy"], abs=5e-5)
    # Interesting on purpose: overconfident overall and uneven across predicted classes.
    assert p.confidence.mean() > p.correct.mean() + 0.02
    precision = [p.correct[p.predicted == k].mean() for k in range(10)]
    assert max(precision) - min(precision) > 0.1


def test_builtin_shift_set_has_its_environments():
    p = load_data("digits-shift")
    env = p.group("environment")
    names, sizes = np.unique(env, return_counts=True)
    expected = ["clean", *(f"gaussian-noise-{s}" for s in range(1, 6)), "ood"]
    assert sorted(names.tolist()) == sorted(expected)
    assert dict(zip(names.tolist(), sizes.tolist(), strict=True)) == {**{e: 899 for e in expected[:-1]}, "ood": 500}
    assert not p.labeled[env == "ood"].any() and p.labeled[env != "ood"].all()
    np.testing.assert_allclose(p.probs.sum(axis=1), 1.0, atol=1e-6)
    acc = [p.correct[env == e].mean() for e in expected[:-1]]
    assert all(a > b for a, b in zip(acc, acc[1:], strict=False)), f"accuracy not falling with noise: {acc}"
    # The clean environment is the default set, rounded to 5 instead of 6 decimals: each entry
    # moves by at most 5e-6, and the largest entry of a row also absorbs the other nine
    # roundings (at most 10 * 5e-6 = 5e-5 in all).
    base = load_data()
    clean = p.subset(env == "clean")
    assert [i.split("/", 1)[1] for i in clean.item_ids] == base.item_ids.tolist()
    np.testing.assert_allclose(clean.probs, base.probs, atol=5.5e-5)
    assert np.mean(clean.predicted == base.predicted) > 0.995


def test_builtin_generator_reproduces_the_shipped_file():
    pytest.importorskip("sklearn")
    import importlib.util

    spec = importlib.util.spec_from_file_location("digits_recipe", MODELS / "digits-logreg" / "make_predictions.py")
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    model, x_test, y_test, rows = recipe.train_classifier()
    shipped = load_data()
    assert [f"digit-{r:04d}" for r in rows] == shipped.item_ids.tolist()
    assert shipped.labels.tolist() == y_test.tolist()
    # The file is rounded to 6 decimals; lbfgs may differ in the last digits across versions.
    np.testing.assert_allclose(model.predict_proba(x_test), shipped.probs, atol=1e-4)


# ----------------------------------------------------------------------------- real releases
def test_cifar100_release(cifar100):
    assert cifar100.n_items == 10_000 and cifar100.n_classes == 100 and not cifar100.has_probs
    assert cifar100.n_labeled == 10_000
    assert cifar100.correct.mean() == pytest.approx(0.7414, abs=1e-12)
    sizes = np.bincount(cifar100.predicted, minlength=100)
    assert sizes.min() == 78 and sizes.max() == 131
    from pbassess.data.cifar100 import CIFAR100_CLASSES

    assert cifar100.classes == CIFAR100_CLASSES


def test_svhn_release(svhn):
    assert svhn.n_items == 26_032 and svhn.n_classes == 10 and svhn.has_probs
    assert svhn.n_labeled == svhn.n_items
    assert svhn.correct.mean() == pytest.approx(0.968, abs=1e-3)
    np.testing.assert_allclose(svhn.probs.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "n_items", "groups"),
    [
        ("adult-sex", 10_054, ["race", "sex", "race-sex"]),
        ("bank-age", 13_730, ["age"]),
        ("german-sex", 334, ["sex", "age", "sex-age"]),
        ("compas-race", 2_056, ["sex", "race", "sex-race"]),
        ("ricci-race", 40, ["Race"]),
    ],
)
def test_fairness_releases(shared_data_dir, name, n_items, groups):
    p = load_data(name)
    assert p.n_items == n_items == model_card(name).extra["n_items"]
    assert p.n_classes == 2 and p.has_probs and p.n_labeled == n_items
    assert sorted(p.groups) == sorted(groups)
    assert len(set(p.item_ids.tolist())) == n_items
    q = load_data(name, model="score_RandomForest")
    assert not np.array_equal(p.confidence, q.confidence)


def _auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Mann-Whitney AUC: P(score of a positive > score of a negative), ties counting half."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def test_german_credit_labels_are_inverted_against_the_scores(shared_data_dir):
    # The card sets invert_labels=True. Check that this is the sensible reading: with the
    # labels as released every classifier is worse than always predicting the majority class
    # (and its scores rank the label below chance); inverted, it beats the majority rate.
    released = load_data("german-sex", invert_labels=False)
    card_view = load_data("german-sex")
    assert np.array_equal(card_view.labels, 1 - released.labels)
    for model in ("score_GaussianNB", "score_LR", "score_DecisionTree", "score_RandomForest",
                  "score_MultiLayerPerceptron"):
        raw = load_data("german-sex", model=model, invert_labels=False)
        inv = load_data("german-sex", model=model)
        assert raw.correct.mean() < 0.35 and inv.correct.mean() > 0.65, model
        score = raw.probs[:, 1]
        assert _auc(score, raw.labels == 1) < 0.5 < _auc(score, inv.labels == 1), model
    for model in ("score_LR", "score_RandomForest"):  # the better ones beat the majority rate only inverted
        raw = load_data("german-sex", model=model, invert_labels=False)
        inv = load_data("german-sex", model=model)
        majority = max(raw.labels.mean(), 1 - raw.labels.mean())
        assert raw.correct.mean() < 1 - majority < majority < inv.correct.mean(), model
    lr = load_data("german-sex")
    assert lr.correct.mean() == pytest.approx(0.734, abs=5e-4)  # 245 of 334
