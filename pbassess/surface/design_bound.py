"""How much any labeling strategy can gain over random labels: the optimal-design bound of a surface.

Linearise the confidence-anchored surface (:func:`pbassess.pymc_models.surface.anchored_model`)
around the true arm accuracies: arm a's logit accuracy is ``x_a . theta`` with ``theta`` the
calibration map's level and slope, the residual's main effects and pairs and the arms' own
effects, each with a Gaussian prior; a label in arm a carries Fisher information
``w_a = mu_a (1 - mu_a)`` about it. Labels ``n_a`` per arm give the posterior covariance

    Sigma(n) = (Lambda_0 + X^T diag(n w) X)^{-1}

and the expected macro MSE of the arms' accuracies (delta method)

    R(n) = (1 / K) sum_a (mu_a (1 - mu_a))^2 x_a^T Sigma(n) x_a       (the K scored arms).

In this linear-Gaussian model the posterior covariance does not depend on the labels' values, so
no adaptive strategy beats the best fixed allocation: :meth:`LinearSurfaceDesign.optimal_allocation`
(convex: ``R`` is a trace of ``C Sigma(n)``, minimised over ``0 <= n_a <= pool_a``, ``sum n = N``)
bounds every strategy from below, and :meth:`LinearSurfaceDesign.random_risk` is the risk of
random labels (the multivariate hypergeometric allocation of N labels drawn from the pool).
:meth:`LinearSurfaceDesign.labels_to_match` is then the fewest labels an optimal design needs to
do what N random labels do. The bound is as good as the linearisation: it holds the residual
scales fixed (the fitted model learns them) and uses one Fisher information per arm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.errors import ConfigError, DataError
from pbassess.pymc_models.surface import (
    ANCHORED_ARM_SCALE,
    ANCHORED_MAIN_SCALE,
    ANCHORED_PAIR_SCALE,
    CALIBRATION_SCALE,
    additive_design,
    anchor_logit,
    anchored_arm_scale,
    indicator_design,
)
from pbassess.seeds import as_generator

#: The largest linearisation :meth:`LinearSurfaceDesign.optimal_allocation` takes (coefficients): each
#: step inverts a P x P precision, ~2 s at ACS's 2,863 (5 steps took 54 s, a design hundreds), ~0.01 s
#: at the 256-arm miscalibrated surface's 294.
DESIGN_MAX_COEFFICIENTS = 1000

#: The variance of a Student-t with 3 degrees of freedom and scale s is 3 s^2: the Gaussian prior
#: that stands in for the anchored model's Student-t_3 map deviations and half-Student-t_3 scales.
STUDENT_T3_VARIANCE = 3.0


@dataclass(frozen=True)
class LinearSurfaceDesign:
    """A surface model linearised around the true accuracies: the design, its prior and the risk's weights.

    Attributes
    ----------
    rows : ndarray, shape (A, P)
        Each arm's row of the linear predictor (logit accuracy = ``rows @ theta``).
    prior_variance : ndarray, shape (P,)
        Gaussian prior variance of every coefficient.
    information : ndarray, shape (A,)
        Fisher information of one label of the arm about its logit accuracy, ``mu (1 - mu)``.
    risk_weight : ndarray, shape (A,)
        Weight of the arm's posterior logit variance in the risk: ``(mu (1 - mu))^2 / K`` on the
        K scored arms, 0 elsewhere (so the risk is the expected macro MSE of the accuracies).
    capacity : ndarray, shape (A,)
        Items of the arm that can be labeled (its pool).

    Examples
    --------
    >>> d = LinearSurfaceDesign(np.eye(2), np.array([1.0, 1.0]), np.array([0.25, 0.25]),
    ...                         np.array([0.5, 0.5]), np.array([10.0, 10.0]))
    >>> round(d.risk([1.0, 1.0]), 4)  # 0.5 / (1 + 0.25) per arm
    0.8
    """

    rows: np.ndarray
    prior_variance: np.ndarray
    information: np.ndarray
    risk_weight: np.ndarray
    capacity: np.ndarray

    def _covariance(self, n: np.ndarray) -> np.ndarray:
        X = self.rows
        precision = X.T @ ((n * self.information)[:, None] * X)
        precision[np.diag_indices_from(precision)] += 1.0 / self.prior_variance
        return np.linalg.inv(precision)

    def _check(self, n: Any) -> np.ndarray:
        n = np.asarray(n, float).ravel()
        if n.shape != self.capacity.shape:
            raise DataError(f"an allocation needs one count per arm ({self.capacity.size}), got {n.size}")
        return n

    def risk(self, n: Any) -> float:
        """Expected macro MSE of the arms' accuracies after ``n[a]`` labels in each arm a.

        Examples
        --------
        >>> d = LinearSurfaceDesign(np.eye(1), np.array([4.0]), np.array([0.25]), np.array([1.0]), np.array([9.0]))
        >>> round(d.risk([4.0]), 4)  # 1 / (1/4 + 4 * 0.25)
        0.8
        """
        return self._risk_and_covariance(self._check(n))[0]

    def _risk_and_covariance(self, n: np.ndarray) -> tuple[float, np.ndarray]:
        S = self._covariance(n)
        return float(np.sum(self.risk_weight * ((self.rows @ S) * self.rows).sum(axis=1))), S

    def random_risk(self, total: int, *, seed: Any = None, draws: int = 64) -> float:
        """Mean risk of ``total`` labels drawn at random from the pool (``draws`` hypergeometric allocations).

        Examples
        --------
        >>> d = LinearSurfaceDesign(np.eye(2), np.ones(2), np.full(2, 0.25), np.full(2, 0.5), np.array([5.0, 5.0]))
        >>> round(d.random_risk(10, seed=0), 4) == round(d.risk([5.0, 5.0]), 4)  # the whole pool
        True
        """
        total = self._total(total)
        rng = as_generator(seed)
        pool = self.capacity.astype(np.int64)
        return float(np.mean([self.risk(rng.multivariate_hypergeometric(pool, total)) for _ in range(draws)]))

    def check_size(self) -> None:
        """Raise :class:`~pbassess.errors.ConfigError` when the design is too large to optimise.

        Examples
        --------
        >>> LinearSurfaceDesign(np.eye(2), np.ones(2), np.ones(2), np.ones(2), np.ones(2)).check_size()
        """
        if self.rows.shape[1] > DESIGN_MAX_COEFFICIENTS:
            raise ConfigError(f"the optimal design takes up to {DESIGN_MAX_COEFFICIENTS:,} coefficients; this surface's "
                              f"has {self.rows.shape[1]:,} ({self.rows.shape[0]:,} arms): label with another strategy "
                              "(variance, variance-reduction, random)")

    def _total(self, total: Any) -> int:
        total = int(total)
        if not 0 <= total <= self.capacity.sum():
            raise ConfigError(f"the number of labels must be between 0 and the pool's {int(self.capacity.sum())}, "
                              f"got {total}")
        return total

    def optimal_allocation(self, total: int, *, labeled: Any = None, iterations: int = 400,
                           tol: float = 1e-9) -> np.ndarray:
        """The allocation of ``total`` labels (fractional, within each arm's pool) of least risk.

        Projected gradient descent with backtracking on the convex risk; the gradient in arm a is
        ``-w_a x_a^T Sigma C Sigma x_a``. ``labeled``: labels already in each arm, which the
        allocation keeps (its lower bounds; the next batch is the difference).

        Examples
        --------
        >>> d = LinearSurfaceDesign(np.eye(2), np.ones(2), np.full(2, 0.25), np.array([1.0, 0.0]),
        ...                         np.array([50.0, 50.0]))
        >>> d.optimal_allocation(20).round(6).tolist()  # only arm 0 is scored and nothing is shared
        [20.0, 0.0]
        """
        total = self._total(total)
        self.check_size()
        cap = self.capacity.astype(float)
        low = np.zeros_like(cap) if labeled is None else np.minimum(self._check(labeled), cap)
        if low.sum() > total:
            raise ConfigError(f"{int(low.sum())} labels are already placed, more than the {total} to allocate")
        n = _project(low + (cap - low) * ((total - low.sum()) / max((cap - low).sum(), 1e-300)), low, cap, total)
        X, w, c = self.rows, self.information, self.risk_weight
        current, S = self._risk_and_covariance(n)
        step = float(total)
        for _ in range(iterations):
            XS = X @ S
            M = XS.T @ (c[:, None] * XS)  # Sigma C Sigma
            grad = -w * ((X @ M) * X).sum(axis=1)
            scale = np.max(np.abs(grad)) or 1.0
            while True:
                trial = _project(n - step * grad / scale, low, cap, total)
                value, S_trial = self._risk_and_covariance(trial)  # the next step's gradient needs its Sigma
                if value <= current or step < 1e-9 * total:
                    break
                step *= 0.5
            moved = np.max(np.abs(trial - n))
            improved = current - value
            n, S, current = trial, S_trial, min(value, current)
            step *= 1.5
            if moved < 1e-6 * total or improved < tol * max(current, 1e-300):
                break
        return n

    def labels_to_match(self, risk: float, *, upper: int | None = None) -> int:
        """The fewest labels whose optimal allocation reaches ``risk`` (``sum(capacity) + 1`` if none does).

        ``upper``: a number of labels expected to reach it (e.g. the random labels whose risk this
        is), which narrows the search; the whole pool is searched when it does not.

        Examples
        --------
        >>> d = LinearSurfaceDesign(np.eye(1), np.array([1.0]), np.array([1.0]), np.array([1.0]), np.array([100.0]))
        >>> d.labels_to_match(0.2)  # 1 / (1 + n) = 0.2 at n = 4
        4
        """
        lo, hi = 0, int(self.capacity.sum())
        if upper is not None and 0 < upper < hi and self.risk(self.optimal_allocation(upper)) <= risk:
            hi = int(upper)
        elif self.risk(self.optimal_allocation(hi)) > risk:
            return hi + 1
        while hi - lo > 1:  # risk(optimal(lo)) > risk >= risk(optimal(hi))
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.risk(self.optimal_allocation(mid)) > risk else (lo, mid)
        return hi if self.risk(self.optimal_allocation(lo)) > risk else lo


def _project(v: np.ndarray, low: np.ndarray, cap: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection onto {low <= n <= cap, sum n = total} (bisection on the shift)."""
    lo, hi = float(np.min(v - cap)), float(np.max(v - low))
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.clip(v - mid, low, cap).sum() > total:
            lo = mid
        else:
            hi = mid
    return np.clip(v - 0.5 * (lo + hi), low, cap)


def next_labels(design: LinearSurfaceDesign, labeled: Any, batch_size: int, available: Any = None) -> np.ndarray:
    """The arms of the next ``batch_size`` labels: the optimal design's increment over ``labeled``.

    The design of ``labeled.sum() + batch_size`` labels that keeps the labels already placed
    (:meth:`LinearSurfaceDesign.optimal_allocation`) is rounded to whole labels (the largest
    remainders) and returned as arm indices, an arm repeated once per label it gets. Arms outside
    ``available`` (a boolean mask; default: arms with unlabeled pool items) get none.

    Examples
    --------
    >>> d = LinearSurfaceDesign(np.eye(2), np.ones(2), np.full(2, 0.25), np.array([1.0, 1.0]), np.array([50.0, 50.0]))
    >>> next_labels(d, [6, 0], 4).tolist()  # equal arms: the design evens them out
    [1, 1, 1, 1]
    >>> next_labels(d, [6, 0], 4, available=[True, False]).tolist()
    [0, 0, 0, 0]
    """
    labeled = np.asarray(labeled, float).ravel()
    pool = design.capacity.astype(float)
    open_ = (labeled < pool) if available is None else np.asarray(available, bool).ravel() & (labeled < pool)
    room = float(np.sum(pool[open_] - labeled[open_]))
    batch = int(min(batch_size, np.floor(room)))
    if batch <= 0:
        return np.zeros(0, dtype=np.int64)
    capped = LinearSurfaceDesign(design.rows, design.prior_variance, design.information, design.risk_weight,
                                 np.where(open_, pool, labeled))
    extra = np.maximum(capped.optimal_allocation(int(labeled.sum()) + batch, labeled=labeled) - labeled, 0.0)
    counts = np.floor(extra).astype(np.int64)
    short = batch - int(counts.sum())
    if short > 0:  # the largest remainders, among the arms with room left
        remainder = np.where(open_ & (labeled + counts < pool), extra - counts, -np.inf)
        counts[np.argsort(-remainder, kind="stable")[:short]] += 1
    return np.repeat(np.arange(counts.size), counts)


def posterior_block_scales(idata: Any) -> dict[str, np.ndarray] | None:
    """The anchored fit's residual scales, block by block: ``sqrt(E[sd^2])`` of ``main_sd``, ``pair_sd``, ``arm_sd``.

    The root mean square over the posterior draws, so that a Gaussian of that scale has the
    variance of the coefficients' posterior-predictive prior. None when the fit has no ``main_sd``
    (not the anchored surface).

    Examples
    --------
    >>> import xarray as xr
    >>> post = xr.Dataset({"main_sd": (("chain", "draw", "main"), np.full((1, 2, 3), 0.1))})
    >>> posterior_block_scales(xr.DataTree.from_dict({"posterior": post}))["main"].tolist()
    [0.1, 0.1, 0.1]
    """
    try:
        post = idata["posterior"]
    except (KeyError, TypeError):
        return None
    if "main_sd" not in post:
        return None
    out = {}
    for key in ("main", "pair", "arm"):
        if f"{key}_sd" in post:
            sd = np.asarray(post[f"{key}_sd"].values, float)
            out[key] = np.sqrt(np.mean(sd.reshape(-1, *sd.shape[2:]) ** 2, axis=0)).ravel()
    return out


def anchored_linearisation(arms: Any, accuracy: Any, *, min_support: float = 0.0, coding: str = "contrast",
                           prior: str = "model", block_scales: Any = None) -> LinearSurfaceDesign:
    """The anchored additive surface linearised around the arms' true accuracies.

    Parameters
    ----------
    arms : ArmCounts
        The pool's arms (their attributes, pool sizes and confidence points).
    accuracy : array (A,)
        True accuracy of every arm (where the linearisation sits and what the labels inform).
    min_support : float
        Only arms with at least this many pool items are scored.
    coding : {"contrast", "indicator"}
        The residual's design, as the model's ``coding`` option.
    prior : {"model", "oracle", "posterior"}
        ``"model"``: every block's coefficients get the variance of its Student-t_3 prior scale
        (3 s^2). ``"posterior"``: the residual blocks get the scales a fit learned
        (``block_scales``, :func:`posterior_block_scales`; the map keeps the model's prior). ``"oracle"``: the residual blocks get the mean square of the coefficients that
        fit the true residual (logit accuracy minus the logit of the arm's mean confidence, a
        minimum-norm least-squares fit), so the prior knows how large the truth's effects are (floored at the
        model's variance / 100).
    block_scales : mapping, optional
        ``{"main": (one per attribute), "pair": (one per pair), "arm": (one)}``, for ``prior="posterior"``.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([0] * 4, [0] * 4, values=[[0, 0], [0, 1], [1, 0], [1, 1]], attributes=("a", "b"),
    ...                           confidence=[0.7, 0.8, 0.9, 0.6], pool_n=[100, 300, 50, 10])
    >>> d = anchored_linearisation(a, [0.7, 0.8, 0.85, 0.6])
    >>> d.rows.shape  # the map's level and slope, two main effects and their pair (no arm effect with two)
    (4, 5)
    >>> d.risk([0, 0, 0, 0]) > d.risk([10, 10, 10, 10])
    True
    """
    if coding not in ("contrast", "indicator"):
        raise ConfigError(f"unknown coding {coding!r} (choose contrast or indicator)")
    if prior not in ("model", "oracle", "posterior"):
        raise ConfigError(f"unknown prior {prior!r} (choose model, oracle or posterior)")
    if prior == "posterior" and block_scales is None:
        raise ConfigError("prior='posterior' needs the fit's block_scales (posterior_block_scales(result.idata))")
    mu = np.asarray(accuracy, float).ravel()
    if mu.size != arms.n_arms:
        raise DataError(f"accuracy needs one value per arm ({arms.n_arms}), got {mu.size}")
    pool = np.asarray(arms.pool_n, float)
    mu = np.clip(mu, 1e-4, 1 - 1e-4)
    points = anchor_logit(arms.anchor_points())
    z = points.mean(axis=1)
    centre = float(np.average(z, weights=np.maximum(pool, 1e-12)))
    design = (additive_design if coding == "contrast" else indicator_design)(arms)
    G = design.matrix
    arm_scale = anchored_arm_scale(arms, ANCHORED_ARM_SCALE)
    blocks = [np.ones((arms.n_arms, 1)), (z - centre)[:, None], G]
    scales = [np.array([CALIBRATION_SCALE[0]]), np.array([CALIBRATION_SCALE[1]]),
              np.where(design.block < design.n_main, ANCHORED_MAIN_SCALE, ANCHORED_PAIR_SCALE)]
    if arm_scale > 0:
        blocks.append(np.eye(arms.n_arms))
        scales.append(np.full(arms.n_arms, arm_scale))
    rows = np.column_stack(blocks)
    variance = STUDENT_T3_VARIANCE * np.concatenate(scales) ** 2
    if prior == "posterior":  # the scales the fit learned, block by block
        n_pair = len(design.names) - design.n_main
        main, pair = (np.asarray(block_scales.get(k, ()), float).ravel() for k in ("main", "pair"))
        if main.size != design.n_main or pair.size != n_pair:
            raise ConfigError(f"block_scales has {main.size} main and {pair.size} pair scales; the design has "
                              f"{design.n_main} and {n_pair} (a fit with other options than the default contrasts?)")
        resid = np.concatenate([main, pair])[design.block]
        variance[2:2 + G.shape[1]] = resid**2
        if arm_scale > 0 and "arm" in block_scales:
            variance[2 + G.shape[1]:] = float(np.asarray(block_scales["arm"]).ravel()[0]) ** 2
    if prior == "oracle":  # the size of the truth's own residual effects, block by block
        calibrated = np.clip(np.mean(1.0 / (1.0 + np.exp(-points)), axis=1), 1e-4, 1 - 1e-4)
        residual = np.log(mu / (1 - mu)) - np.log(calibrated / (1 - calibrated))
        resid_rows = rows[:, 2:]
        coef = np.linalg.pinv(resid_rows) @ residual
        block_id = np.concatenate([design.block, np.full(rows.shape[1] - 2 - G.shape[1], -1)])
        for b in np.unique(block_id):
            cols = 2 + np.flatnonzero(block_id == b)
            variance[cols] = max(float(np.mean(coef[cols - 2] ** 2)), float(variance[cols].mean()) / 100)
    scored = pool >= max(min_support, 1e-12)
    if not scored.any():
        raise DataError("no arm has enough pool items to score")
    weight = np.where(scored, (mu * (1 - mu)) ** 2, 0.0) / scored.sum()
    return LinearSurfaceDesign(rows, variance, mu * (1 - mu), weight, pool)
