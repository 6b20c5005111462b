"""The one target model: the labeling session starts from exactly the engine's prior, for every target x prior."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.active import model as M
from pbassess.active.arms import BetaArms, CalibrationArms, CostArms, build_target_model, eb_refit
from pbassess.active.scores import refit_eb_prior
from pbassess.active.session import LabelingSession
from pbassess.active.targets import build_inputs
from pbassess.errors import ConfigError

CLASSES = ("cat", "dog", "owl", "fox")
#: A three-level cost matrix (the engine's Dirichlet path) and the 0-1 matrix (its Beta path).
MULTI = np.array([[0, 1, 1, 4], [1, 0, 2, 2], [3, 1, 0, 1], [1, 1, 1, 0]], dtype=float)


def pool(full_probs: bool, n: int = 300, seed: int = 3) -> Predictions:
    rng = np.random.default_rng(seed)
    k = len(CLASSES)
    predicted = rng.integers(k - 1, size=n)  # class "fox" is never predicted: not an arm
    right = rng.random(n) < np.array([0.9, 0.6, 0.75, 0.5])[predicted]
    truth = np.where(right, predicted, (predicted + rng.integers(1, k, n)) % k)
    labels = [CLASSES[t] for t in truth]
    if not full_probs:
        return Predictions.from_top1([CLASSES[p] for p in predicted], rng.uniform(0.3, 0.99, n), labels,
                                     classes=CLASSES)
    probs = rng.dirichlet(np.ones(k) * 0.7, n)
    top = probs.max(axis=1)
    probs[np.arange(n), probs.argmax(axis=1)] = probs[np.arange(n), predicted]
    probs[np.arange(n), predicted] = top
    return Predictions.from_probs(probs, labels=labels, classes=CLASSES)


def engine_prior(x) -> list[np.ndarray]:
    """The engine's per-arm prior parameters (cells in use only)."""
    return [np.concatenate([x.prior_a[k, : x.n_cells[k]], x.prior_b[k, : x.n_cells[k]]])
            for k in range(x.n_arms)]


def session_prior(arms_model, target: str, arms: np.ndarray, cost: np.ndarray | None) -> list[np.ndarray]:
    """The session's prior in the engine's parametrisation (arms only, empty bins out, equal costs merged)."""
    out = []
    for k in arms:
        if isinstance(arms_model, BetaArms):
            a, b = arms_model.alpha[k], arms_model.beta[k]
            if target == "most-accurate":  # the engine minimises: it runs on 1 - accuracy
                a, b = b, a
            out.append(np.array([a, b]))
        elif isinstance(arms_model, CalibrationArms):
            used = arms_model.weight[k] > 0
            out.append(np.concatenate([arms_model.alpha[k, used], arms_model.beta[k, used]]))
        else:
            assert isinstance(arms_model, CostArms)
            levels = np.unique(cost[k])
            agg = np.bincount(np.searchsorted(levels, cost[k]), weights=arms_model.alpha[k])
            if levels.size == 2 and np.all(np.unique(cost, axis=None).size == 2):
                out.append(agg)  # Beta path: (low level, high level)
            else:
                out.append(np.concatenate([agg, np.ones_like(agg)]))
    return out


TARGET_COSTS = [(t, "zero-one") for t in M.TARGETS] + [("highest-cost", "multi")]


@pytest.mark.parametrize("full_probs", [False, True])
@pytest.mark.parametrize(("target", "cost_name"), TARGET_COSTS)
@pytest.mark.parametrize("prior", M.PRIORS)
def test_session_prior_equals_engine_prior(tmp_path, target, prior, full_probs, cost_name):
    p = pool(full_probs)
    cost = MULTI if cost_name == "multi" else 1 - np.eye(len(CLASSES))
    kw = {"cost_matrix": cost} if target == "highest-cost" and cost_name == "multi" else {}
    try:
        x = build_inputs(p, target, prior=prior, pseudocount=3.0, bins=5, **kw)
    except ConfigError as exc:
        x = exc
    try:
        session = LabelingSession.start(p, tmp_path / "s.json", target=target, prior=prior, pseudocount=3.0,
                                        bins=5, seed=0, strategy="random-item", **kw)
    except ConfigError as exc:
        session = exc
    if isinstance(x, ConfigError) or isinstance(session, ConfigError):
        # empirical Bayes needs a Beta-scored target: both refuse the same combinations, with the same words
        assert prior == "eb" and type(x) is type(session) is ConfigError, (x, session)
        assert str(x) == str(session)
        assert not (tmp_path / "s.json").exists()
        return
    arms = np.flatnonzero(np.bincount(p.predicted, minlength=p.n_classes) > 0)
    found = session_prior(session._model(), target, arms, cost)
    expected = engine_prior(x)
    assert len(found) == len(expected) == 3
    for f, e in zip(found, expected, strict=True):
        np.testing.assert_allclose(f, e, rtol=1e-12, atol=0)


def test_uniform_cost_prior_is_symmetric_as_in_the_paper(tmp_path):
    # The defect: the session put 0.5 * pc on the diagonal and the engine pc / K in every cell.
    # The paper's code (and assess_confusion) use pc / K everywhere: np.ones((K, K)) * pc / K.
    p = pool(full_probs=False)
    session = LabelingSession.start(p, tmp_path / "s.json", target="highest-cost", pseudocount=2.0, seed=0)
    alpha = session._model().alpha
    np.testing.assert_allclose(alpha, np.full((4, 4), 2.0 / 4))
    from pbassess.stats.cost import dirichlet_prior

    np.testing.assert_allclose(alpha, dirichlet_prior("uniform", 4, 2.0))


def test_session_posterior_adds_counts_to_the_shared_prior():
    pred = np.array([0, 0, 1, 1, 2])
    conf = np.array([0.9, 0.7, 0.6, 0.8, 0.5])
    idx, lab = np.array([0, 1, 2]), np.array([0, 2, 1])
    cells = M.pool_cells(pred, conf, 3)
    start = M.target_prior("least-accurate", "informed", cells, pseudocount=4.0)
    model = build_target_model("least-accurate", pred, conf, idx, lab, prior="informed", pseudocount=4.0)
    np.testing.assert_allclose(model.alpha, start.a + [1, 1, 0])  # one right of class 0, one of class 1
    np.testing.assert_allclose(model.beta, start.b + [1, 0, 0])
    np.testing.assert_allclose(start.a, 4 * np.array([0.8, 0.7, 0.5]))


def test_session_empirical_bayes_matches_the_kernel_refit():
    rng = np.random.default_rng(0)
    k = 5
    pred = rng.integers(k, size=400)
    truth = np.where(rng.random(400) < np.linspace(0.3, 0.9, k)[pred], pred, (pred + 1) % k)
    idx = rng.permutation(400)[:250]
    model = build_target_model("least-accurate", pred, np.full(400, 0.8), idx, truth[idx], prior="eb")
    first = idx[:200]  # refitted from the first 200 labels (every 100), then all 250 counts added
    succ = np.bincount(pred[first], weights=truth[first] == pred[first], minlength=k)
    fail = np.bincount(pred[first], minlength=k) - succ
    A, B = np.ones((k, 1)), np.ones((k, 1))
    assert refit_eb_prior(A, B, succ, fail, k)
    prior_a, prior_b = A[:, 0] - succ, B[:, 0] - fail
    n_all = np.bincount(pred[idx], minlength=k)
    s_all = np.bincount(pred[idx], weights=truth[idx] == pred[idx], minlength=k)
    np.testing.assert_allclose(model.alpha, prior_a + s_all, rtol=1e-12)
    np.testing.assert_allclose(model.beta, prior_b + n_all - s_all, rtol=1e-12)
    assert eb_refit(np.array([3.0, 0.0]), np.array([1.0, 0.0])) is None  # one labeled class: no refit
    # a 0-1 cost: the same refit on P(cost 0), spread evenly over each level's cells
    cost_model = build_target_model("highest-cost", pred, np.full(400, 0.8), idx, truth[idx], prior="eb",
                                    n_classes=k)
    confusion = np.zeros((k, k))
    np.add.at(confusion, (pred[idx], truth[idx]), 1.0)
    prior_alpha = cost_model.alpha - confusion
    np.testing.assert_allclose(np.diag(prior_alpha), prior_a, rtol=1e-12)
    np.testing.assert_allclose(prior_alpha.sum(axis=1) - np.diag(prior_alpha), prior_b, rtol=1e-12)


def test_a_registered_prior_serves_engine_and_session(tmp_path):
    def optimistic(target, cells, pc):
        a = np.full(cells.n_classes, 0.9 * pc)
        return M.TargetPrior(target, "optimistic", pc, a=a, b=pc - a)

    M.register_prior("optimistic", optimistic)
    try:
        p = pool(full_probs=False)
        x = build_inputs(p, "least-accurate", prior="optimistic", pseudocount=10)
        np.testing.assert_allclose(x.prior_a[:, 0], 9.0)
        s = LabelingSession.start(p, tmp_path / "s.json", target="least-accurate", prior="optimistic",
                                  pseudocount=10, seed=0)
        np.testing.assert_allclose(s._model().alpha, 9.0)
        assert "optimistic" in M.prior_names()
    finally:
        del M._BUILDERS["optimistic"]
    with pytest.raises(ConfigError, match="unknown prior 'optimistic'"):
        build_inputs(p, "least-accurate", prior="optimistic")


def test_one_list_of_targets_strategies_and_priors():
    from pbassess.active import select, strategies, targets
    from pbassess.cli import build_parser

    assert select.TARGETS is M.TARGETS and targets.TARGETS is M.TARGETS
    assert "greedy" in strategies.STRATEGIES and select.STRATEGIES is strategies.STRATEGIES
    parser = build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None) and "session" in a.choices)
    session_start = sub.choices["session"]._subparsers._group_actions[0].choices["start"]
    choices = {a.dest: tuple(a.choices) for a in session_start._actions if a.choices}
    # the session also offers "uncertainty" (active estimation with recorded labeling probabilities,
    # pbassess.active.session_estimation), which the compiled engine does not simulate
    from pbassess.active.session_estimation import UNCERTAINTY

    assert choices["strategy"] == strategies.STRATEGIES + (UNCERTAINTY,) and choices["target"] == M.TARGETS
    assert choices["prior"] == M.PRIORS


@pytest.mark.parametrize("by", [("predicted",), ("predicted", "bin"), ("predicted", "true")])
def test_session_counts_are_the_counting_layers(by):
    # the session counts labels with bincount (fast in a fresh process); they equal count_cells' cells
    from pbassess.active.arms import _labeled_counts

    rng = np.random.default_rng(4)
    pred, y = rng.integers(5, size=300), rng.integers(5, size=300)
    conf = rng.uniform(0.2, 1.0, 300)
    edges = np.linspace(0, 1, 8)
    n, right = _labeled_counts(pred, conf, y, 5, by, edges=edges)
    cells = M.cell_counts(pred, conf, 5, by, edges=edges, labels=y)
    np.testing.assert_array_equal(n, cells["n"].to_numpy())
    np.testing.assert_array_equal(right, cells["correct"].to_numpy())
