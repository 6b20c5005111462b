"""Trend models over ordered shift levels, and their :class:`~pbassess.inference.Spec` (NUTS only).

Accuracy. For ordered levels l = 0..L-1 with numeric intensities ``x_l`` (e.g. 0..5), ``n_l``
labeled items and ``k_l`` correct ones (:func:`accuracy_trend_model`)::

    alpha ~ Normal(logit(mean accuracy), 1.5)       # accuracy at the mean intensity
    beta  ~ Normal(0, 1)                            # change in logit accuracy per unit x (standardised)
    sigma ~ HalfNormal(0.5)                         # level-to-level deviation from the trend
    z_l   ~ Normal(0, 1)
    logit(theta_l) = alpha + beta * (x_l - mean x) / sd x + sigma * z_l
    k_l   ~ Binomial(n_l, theta_l)

Calibration. Per level l and confidence bin b (``s_lb`` the mean confidence of its ``n_lb``
labeled items; :func:`calibration_trend_model`)::

    a ~ Normal(0, 1); b ~ Normal(0, 1); sigma ~ HalfNormal(0.5); tau ~ HalfNormal(0.5)
    delta_l = a + b * xs_l + sigma * u_l            # level's calibration offset (logit scale)
    logit(theta_lb) = logit(s_lb) + delta_l + tau * z_lb
    k_lb ~ Binomial(n_lb, theta_lb)
    ece_l = sum_b (n_lb / n_l) |theta_lb - s_lb|

Neither has a conjugate posterior. :class:`AccuracyTrendSpec` and :class:`CalibrationTrendSpec`
give them to :func:`pbassess.inference.fit` with one Bernoulli log-likelihood value per labeled
item (with its level's, or level x bin cell's, accuracy): when only counts are known the items
they imply are used (:func:`~pbassess.pymc_models.hierarchical.observations_from_counts`;
Bernoulli items of one cell are exchangeable, so PSIS-LOO is the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Observations
from pbassess.pymc_models.hierarchical import BernoulliCellsSpec, observations_from_counts

__all__ = [
    "TREND_NUTS_DEFAULTS",
    "AccuracyTrendSpec",
    "CalibrationTrendSpec",
    "accuracy_trend_model",
    "calibration_trend_model",
]

#: NUTS defaults of the trend models under the user's ``sample_kwargs``.
TREND_NUTS_DEFAULTS: dict[str, Any] = {"target_accept": 0.95}


def _level_names(levels: Sequence[Any] | None, intensity: Any, size: int) -> list[str]:
    if levels is not None:
        names = [str(v) for v in levels]
    else:
        names = [str(v) for v in (np.arange(size) if intensity is None else np.asarray(intensity).tolist())]
    if len(names) != size:
        raise ConfigError(f"{len(names)} level names for {size} levels")
    return names


def _accuracy_counts(correct: Any, n: Any, intensity: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = np.asarray(correct, dtype=np.int64)
    m = np.asarray(n, dtype=np.int64)
    if k.ndim != 1 or k.shape != m.shape or k.size < 2:
        raise ConfigError("the trend model needs counts of at least two levels, as vectors of one length")
    if (k < 0).any() or (k > m).any():
        raise ConfigError("correct counts must lie between 0 and the number of labeled items")
    x = np.arange(k.size, dtype=float) if intensity is None else np.asarray(intensity, dtype=float)
    if x.shape != k.shape or not np.all(np.isfinite(x)) or np.ptp(x) == 0:
        raise ConfigError("intensity must be finite numbers, one per level, not all equal")
    return k, m, x


def accuracy_trend_model(correct: Any, n: Any, intensity: Any = None, *, levels: Sequence[Any] | None = None):
    """The accuracy trend model of the module docstring (non-centred), over per-level counts.

    Parameters
    ----------
    correct, n : array_like, shape (L,)
    intensity : array_like, shape (L,), optional
        Numeric level values (default 0..L-1).
    levels : sequence, optional
        Level names (coords of dim ``level``; default the intensities as text).

    Returns
    -------
    pymc.Model
        Deterministic ``theta`` (level), observed ``correct`` (level).

    Examples
    --------
    >>> m = accuracy_trend_model([90, 80, 60], [100, 100, 100])
    >>> sorted(v.name for v in m.free_RVs), m.named_vars_to_dims["theta"]
    (['alpha', 'beta', 'sigma', 'z'], ('level',))
    """
    import pymc as pm

    k, m, x = _accuracy_counts(correct, n, intensity)
    xs = (x - x.mean()) / x.std()
    mean_acc = np.clip((k.sum() + 1) / (m.sum() + 2), 0.01, 0.99)
    coords = {"level": _level_names(levels, intensity, k.size)}
    with pm.Model(coords=coords) as model:
        alpha = pm.Normal("alpha", float(np.log(mean_acc / (1 - mean_acc))), 1.5)
        beta = pm.Normal("beta", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 0.5)
        z = pm.Normal("z", 0.0, 1.0, dims="level")
        theta = pm.Deterministic("theta", pm.math.invlogit(alpha + beta * xs + sigma * z), dims="level")
        pm.Binomial("correct", n=m, p=theta, observed=k, dims="level")
    return model


def _calibration_counts(n: Any, correct: Any, score_sum: Any, intensity: Any
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    m = np.asarray(n, dtype=np.int64)
    k = np.asarray(correct, dtype=np.int64)
    ssum = np.asarray(score_sum, dtype=float)
    if m.ndim != 2 or m.shape != k.shape or m.shape != ssum.shape or m.shape[0] < 2:
        raise ConfigError("the calibration trend needs (levels x bins) counts of at least two levels")
    if (k < 0).any() or (k > m).any():
        raise ConfigError("correct counts must lie between 0 and the number of labeled items")
    if (m.sum(axis=1) == 0).any():
        raise ConfigError("every level needs labeled items")
    x = np.arange(m.shape[0], dtype=float) if intensity is None else np.asarray(intensity, dtype=float)
    if x.shape != (m.shape[0],) or np.ptp(x) == 0:
        raise ConfigError("intensity must be numbers, one per level, not all equal")
    return m, k, ssum, x


def calibration_trend_model(n: Any, correct: Any, score_sum: Any, intensity: Any = None, *,
                            levels: Sequence[Any] | None = None, bins: Sequence[Any] | None = None):
    """The calibration trend model of the module docstring: bin accuracies around the confidences.

    ``delta_l < 0`` means overconfidence; ``P(b < 0)`` is the probability that overconfidence
    grows with the shift, and the ``ece`` draws pool information across levels and bins.
    Empty (level, bin) cells are dropped: the others are the model's ``cell`` dim, named
    ``"<level>|<bin>"``.

    Parameters
    ----------
    n, correct, score_sum : array_like, shape (L, B)
        Per-level bin counts (``ece_bin_n`` etc. of a shift table).
    intensity : array_like, shape (L,), optional
    levels, bins : sequence, optional
        Names of the levels (default the intensities as text) and of the bins (default 0..B-1).

    Returns
    -------
    pymc.Model
        Deterministics ``delta`` and ``ece`` (level) and ``bin_accuracy`` (cell); observed
        ``correct`` (cell).

    Examples
    --------
    >>> m = calibration_trend_model([[10, 90], [30, 70]], [[5, 85], [10, 50]], [[6.5, 85.0], [19.5, 66.5]])
    >>> sorted(v.name for v in m.free_RVs), list(m.coords["cell"])
    (['a', 'b', 'sigma', 'tau', 'u', 'z'], ['0.0|0', '0.0|1', '1.0|0', '1.0|1'])
    """
    import pymc as pm

    m, k, ssum, x = _calibration_counts(n, correct, score_sum, intensity)
    xs = (x - x.mean()) / x.std()
    level_names = [str(v) for v in x] if levels is None else _level_names(levels, None, m.shape[0])
    bin_names = [str(b) for b in (range(m.shape[1]) if bins is None else bins)]
    level_idx, bin_idx = np.nonzero(m > 0)
    s = np.clip(ssum[level_idx, bin_idx] / m[level_idx, bin_idx], 1e-4, 1 - 1e-4)
    weight = m[level_idx, bin_idx] / m.sum(axis=1)[level_idx]
    cells = [f"{level_names[i]}|{bin_names[j]}" for i, j in zip(level_idx.tolist(), bin_idx.tolist(), strict=True)]
    with pm.Model(coords={"level": level_names, "cell": cells}) as model:
        a = pm.Normal("a", 0.0, 1.0)
        b = pm.Normal("b", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 0.5)
        tau = pm.HalfNormal("tau", 0.5)
        u = pm.Normal("u", 0.0, 1.0, dims="level")
        z = pm.Normal("z", 0.0, 1.0, dims="cell")
        delta = pm.Deterministic("delta", a + b * xs + sigma * u, dims="level")
        theta = pm.Deterministic("bin_accuracy", pm.math.invlogit(np.log(s / (1 - s)) + delta[level_idx] + tau * z),
                                 dims="cell")
        pm.Binomial("correct", n=m[level_idx, bin_idx], p=theta, observed=k[level_idx, bin_idx], dims="cell")
        gaps = weight * abs(theta - s)
        onehot = (level_idx[None, :] == np.arange(m.shape[0])[:, None]).astype(float)
        pm.Deterministic("ece", pm.math.dot(onehot, gaps), dims="level")
    return model


class AccuracyTrendSpec(BernoulliCellsSpec):
    """:func:`accuracy_trend_model` for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``theta`` (level: each level's accuracy), ``alpha``, ``beta`` (the trend) and
    ``sigma``. One Bernoulli log-likelihood value per labeled item of a level.

    Parameters
    ----------
    correct, n, intensity, levels
        As for :func:`accuracy_trend_model`.
    observations : Observations, optional
        The labeled items (cell = level index, correct 1/0); default the items the counts imply.

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.inference import fit, mock_pymc_sample
    >>> spec = AccuracyTrendSpec([9, 6, 3], [10, 10, 10])
    >>> sorted(spec.reported), spec.observations.size
    (['alpha', 'beta', 'sigma', 'theta'], 30)
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     tree = fit(spec, inference="nuts", seed=0, sample_kwargs={"draws": 20, "tune": 20, "chains": 1}).idata
    >>> dict(tree["log_likelihood"]["correct"].sizes)
    {'chain': 1, 'draw': 20, 'item': 30}
    """

    name = "accuracy trend"
    theta_name = "theta"
    nuts_defaults = TREND_NUTS_DEFAULTS

    def __init__(self, correct: Any, n: Any, intensity: Any = None, *, levels: Sequence[Any] | None = None,
                 observations: Observations | None = None) -> None:
        self.k, self.n, self.intensity = _accuracy_counts(correct, n, intensity)
        self.levels = _level_names(levels, intensity, self.k.size)
        self.cell_names = list(self.levels)
        self.observations = (observations_from_counts(self.n, self.k, self.cell_names) if observations is None
                             else observations)
        self._given_intensity = intensity
        self._model = None
        model = self.model()
        self.coords = {name: list(values) for name, values in model.coords.items()}
        self.reported = {"theta": ("level",), "alpha": (), "beta": (), "sigma": ()}
        self._check_observations()

    def build_model(self):
        return accuracy_trend_model(self.k, self.n, self._given_intensity, levels=self.levels)

    def constant_data(self) -> xr.Dataset:
        coords: dict[str, Any] = {"level": self.levels}
        data: dict[str, Any] = {"n_labeled": ("level", self.n), "n_correct": ("level", self.k),
                                "intensity": ("level", self.intensity)}
        self._item_cells(data, coords)
        return xr.Dataset(data, coords=coords)


class CalibrationTrendSpec(BernoulliCellsSpec):
    """:func:`calibration_trend_model` for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``ece`` and ``delta`` (level), ``a``, ``b`` (the trend of the calibration offset),
    ``sigma`` and ``tau``. One Bernoulli log-likelihood value per labeled item of a (level, bin)
    cell, with the cell's ``bin_accuracy``.

    Parameters
    ----------
    n, correct, score_sum, intensity, levels, bins
        As for :func:`calibration_trend_model`.
    observations : Observations, optional
        The labeled items (cell = index among the non-empty (level, bin) cells, row-major);
        default the items the counts imply.

    Examples
    --------
    >>> spec = CalibrationTrendSpec([[10, 90], [30, 70]], [[5, 85], [10, 50]], [[6.5, 85.0], [19.5, 66.5]])
    >>> sorted(spec.reported), spec.observations.size, spec.cell_names[:2]
    (['a', 'b', 'delta', 'ece', 'sigma', 'tau'], 200, ['0.0|0', '0.0|1'])
    """

    name = "calibration trend"
    theta_name = "bin_accuracy"
    nuts_defaults = TREND_NUTS_DEFAULTS

    def __init__(self, n: Any, correct: Any, score_sum: Any, intensity: Any = None, *,
                 levels: Sequence[Any] | None = None, bins: Sequence[Any] | None = None,
                 observations: Observations | None = None) -> None:
        self.grid_n, self.grid_k, self.score_sum, self.intensity = _calibration_counts(n, correct, score_sum, intensity)
        self._args = (intensity, levels, bins)
        self._model = None
        model = self.model()
        self.levels = [str(v) for v in model.coords["level"]]
        self.bins = [str(b) for b in (range(self.grid_n.shape[1]) if bins is None else bins)]
        self.cell_names = [str(c) for c in model.coords["cell"]]
        level_idx, bin_idx = np.nonzero(self.grid_n > 0)
        self.n, self.k = self.grid_n[level_idx, bin_idx], self.grid_k[level_idx, bin_idx]
        self.observations = (observations_from_counts(self.n, self.k, self.cell_names) if observations is None
                             else observations)
        self.coords = {name: list(values) for name, values in model.coords.items()}
        self.reported = {"ece": ("level",), "delta": ("level",), "a": (), "b": (), "sigma": (), "tau": ()}
        self._check_observations()

    def build_model(self):
        intensity, levels, bins = self._args
        return calibration_trend_model(self.grid_n, self.grid_k, self.score_sum, intensity, levels=levels, bins=bins)

    def constant_data(self) -> xr.Dataset:
        dims = ("level", "bin")
        coords: dict[str, Any] = {"level": self.levels, "bin": self.bins}
        data: dict[str, Any] = {"n_labeled": (dims, self.grid_n), "n_correct": (dims, self.grid_k),
                                "score_sum": (dims, self.score_sum), "intensity": ("level", self.intensity)}
        self._item_cells(data, coords)
        return xr.Dataset(data, coords=coords)
