"""The fast binning paths give exactly what the plain rules give (issue 25).

* equal-width bins by multiply-and-truncate (:func:`pbassess.counting.assign_bins`) against
  ``searchsorted`` on every double within 40 ulp of every edge, for 1 to 260 bins and more;
* per-class bin counts in one pass (:func:`~pbassess.counting.bins.class_bin_counts`) and the
  classwise metrics built on them against one column at a time, bit for bit;
* the fused max/argmax (:func:`~pbassess.counting.bins.top_label`) against NumPy, ties and NaN
  included, on both its NumPy and numba paths.

Speed is measured by ``benchmarks/interactive.py``, never here.
"""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.calibration import metrics as M
from pbassess.calibration.binning import bin_sums, resolve_edges
from pbassess.counting import assign_bins
from pbassess.counting import bins as B

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1e-300, 5e-324, 1.0, 2.0, -2.0, -0.5, 1.5, 1e300, -1e300,
            np.nextafter(1.0, 2.0), np.nextafter(0.0, -1.0)]


def _searchsorted_rule(s: np.ndarray, e: np.ndarray, clip: bool) -> np.ndarray:
    n = e.size - 1
    idx = np.searchsorted(e, s, side="right") - 1
    if clip:
        return np.clip(idx, 0, n - 1)
    idx[s == e[-1]] = n - 1
    idx[~((s >= e[0]) & (s <= e[-1]))] = -1
    return idx


def _near_every_edge(e: np.ndarray, ulps: int = 40) -> np.ndarray:
    points = []
    for edge in e:
        below = above = edge
        points.append(edge)
        for _ in range(ulps):
            below, above = np.nextafter(below, -np.inf), np.nextafter(above, np.inf)
            points += [below, above]
    return np.array(points + SPECIALS)


@pytest.mark.parametrize("n_bins", [*range(1, 261), 500, 999, 1000, 1024, 4096, 10_000])
def test_truncation_equals_searchsorted_near_every_edge(n_bins):
    e = np.linspace(0.0, 1.0, n_bins + 1)
    s = _near_every_edge(e)
    for clip in (True, False):
        got = assign_bins(s, e, clip=clip)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, _searchsorted_rule(s, e, clip))


def test_truncation_equals_searchsorted_on_random_scores_of_any_shape():
    rng = np.random.default_rng(0)
    for n_bins in (2, 7, 10, 15, 20, 100):
        e = np.linspace(0.0, 1.0, n_bins + 1)
        s = np.concatenate([rng.random(5000), rng.integers(0, n_bins + 1, 500) / n_bins, np.round(rng.random(500), 2)])
        s = s.reshape(100, 60)
        for clip in (True, False):
            np.testing.assert_array_equal(assign_bins(s, e, clip=clip), _searchsorted_rule(s, e, clip))


def test_scalars_and_other_edges_keep_the_searchsorted_path():
    assert int(assign_bins(0.7, np.linspace(0, 1, 11))) == 6      # 0.7 < linspace[7] = 0.7000000000000001
    e = np.array([0.0, 0.3, 0.5, 0.9, 1.0])
    s = _near_every_edge(e, 5)
    np.testing.assert_array_equal(assign_bins(s, e), _searchsorted_rule(s, e, True))


def _pool(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.5), n)
    p[:100] = np.round(p[:100], 1)                 # scores on edges
    p[:100] /= p[:100].sum(axis=1, keepdims=True)
    return p, rng.integers(0, k, n)


def test_class_bin_counts_equal_one_column_at_a_time():
    p, y = _pool(4000, 6)
    for edges in (np.linspace(0, 1, 16), np.array([0.0, 0.3, 0.5, 0.9, 1.0])):
        n, positives, score_sum = B.class_bin_counts(p, y, edges)
        for j in range(p.shape[1]):
            one = bin_sums(p[:, j], y == j, edges)
            np.testing.assert_array_equal(n[j], one.n)
            np.testing.assert_array_equal(positives[j], one.outcome_sum)
            np.testing.assert_array_equal(score_sum[j], one.score_sum)


@pytest.mark.parametrize(("bins", "binning", "convention"), [
    (15, "uniform", "left"), ([0, 0.3, 0.5, 0.9, 1.0], "uniform", "left"), (10, "quantile", "left"),
    (10, "uniform", "netcal"), (10, "uniform", "torchmetrics"), (7, "uniform", "right")])
def test_classwise_metrics_equal_their_column_by_column_definition(bins, binning, convention):
    p, y = _pool(3000, 5, seed=1)
    terms = []
    for j in range(p.shape[1]):
        w, gap = M.bin_gaps(M.binned(p[:, j], y == j, bins, binning=binning, convention=convention))
        terms.append((float(np.sum(w * gap)), float(np.sum(w * gap**2))))
    assert M.classwise_ece(p, y, bins, binning=binning, convention=convention) == float(np.mean([a for a, _ in terms]))
    assert M.marginal_calibration_error(p, y, bins, binning=binning, convention=convention) == float(
        np.mean([b for _, b in terms]) ** 0.5)
    predicted, conf = p.argmax(axis=1), p.max(axis=1)
    correct = predicted == y
    edges = resolve_edges(conf, bins, binning)
    want = np.full(p.shape[1], np.nan)
    for c in np.unique(predicted):
        mask = predicted == c
        w, gap = M.bin_gaps(bin_sums(conf[mask], correct[mask], edges, convention))
        want[c] = np.sum(w * gap)
    got, counts = M.predicted_class_ece(predicted, conf, correct, p.shape[1], bins, binning=binning,
                                        convention=convention)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(counts, np.bincount(predicted, minlength=p.shape[1]))


def test_classwise_metrics_refuse_what_they_refused():
    with pytest.raises(Exception, match="probabilities in"):
        M.classwise_ece([[0.5, 1.5], [0.2, 0.8]], [0, 1], 2)
    assert np.isnan(M.predicted_class_ece([], [], [], 3, 2)[0]).all()


@pytest.mark.parametrize("numba_path", [False, True])
def test_top_label_equals_numpy_argmax_and_max(numba_path, monkeypatch):
    if numba_path:
        monkeypatch.setattr(B, "TOP_LABEL_NUMBA_MIN", 0)
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(7), 3000)
    p[::13, 3] = p[::13, 1]        # ties: the first maximum wins
    p[5, 2] = np.nan               # a NaN wins, as in numpy
    p[6, 0] = np.nan
    p[7] = 0.25
    predicted, confidence = B.top_label(p)
    np.testing.assert_array_equal(predicted, p.argmax(axis=1))
    np.testing.assert_array_equal(confidence, p.max(axis=1))
    assert predicted.dtype == np.int64


def test_top1_ece_is_the_ece_of_max_against_argmax():
    p, y = _pool(2000, 4, seed=3)
    conf, correct = p.max(axis=1), p.argmax(axis=1) == y
    assert M.top1_ece(p, y, 15) == M.expected_calibration_error(conf, correct, 15)
