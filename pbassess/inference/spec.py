"""What an assessment declares once so that :func:`pbassess.inference.fit` can fit it either way.

A :class:`Spec` is the model of one assessment over its sufficient counts (the counting core's
output): its conjugate posterior where one exists, its PyMC model over the same counts, the
variables it reports, and the log-likelihood of each labeled item. The fit layer turns it into
the one DataTree contract (:mod:`pbassess.inference.fit`), whichever inference is chosen; the
specs themselves live beside their PyMC builders in :mod:`pbassess.pymc_models`.

Observations are the labeled items: :class:`Observations` holds each item's cell (a flat index
into the spec's cells) and outcome (1/0 for a Bernoulli cell, the true class for a categorical
one). PSIS-LOO and exact LOO leave one *item* out, never a whole cell.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import xarray as xr

__all__ = ["Observations", "Spec"]


@dataclass(frozen=True)
class Observations:
    """The labeled items of a fit: each one's cell and outcome, and their names.

    Parameters
    ----------
    cell : numpy.ndarray of int, shape (N,)
        Flat index of each item's cell (``-1``: in no cell; such items are dropped).
    outcome : numpy.ndarray of int, shape (N,)
        1/0 (correct or not) for Bernoulli cells, the true class index for categorical cells.
    item : numpy.ndarray, shape (N,)
        The items' ids (coordinate of dim ``item``).

    Examples
    --------
    >>> obs = Observations.of([0, 1, -1], [1, 0, 1], ["x", "y", "z"])
    >>> obs.cell.tolist(), obs.outcome.tolist(), obs.item.tolist(), obs.size
    ([0, 1], [1, 0], ['x', 'y'], 2)
    """

    cell: np.ndarray
    outcome: np.ndarray
    item: np.ndarray

    @classmethod
    def of(cls, cell: Any, outcome: Any, item: Any = None) -> Observations:
        """Observations from per-item arrays, keeping the items that belong to a cell."""
        cell = np.asarray(cell, dtype=np.int64).ravel()
        outcome = np.asarray(outcome).astype(np.int64).ravel()
        item = np.arange(cell.size) if item is None else np.asarray(item).ravel()
        keep = cell >= 0
        if keep.all():  # every item in a cell: views instead of three copies of every per-item array
            keep = slice(None)
        return cls(cell[keep], outcome[keep], np.asarray([str(v) for v in item[keep]], dtype=object)
                   if item.dtype == object else item[keep])

    @classmethod
    def of_pool(cls, preds: Any, cells_and_outcomes: Any) -> Observations | None:
        """The labeled items of a pool, or None when its arrays stay on disk (a lazy, dask-backed pool).

        ``cells_and_outcomes(preds) -> (cell, outcome)`` gives one value per item of the pool;
        unlabeled items are dropped here, and the items' ids (``preds.item_ids``) name them.
        Without the items, a fit's log-likelihood is one value per cell.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> p = Predictions.from_top1(["a", "b", "a"], [0.9, 0.6, 0.8], ["a", None, "b"])
        >>> obs = Observations.of_pool(p, lambda q: (q.predicted, q.correct))
        >>> obs.cell.tolist(), obs.outcome.tolist(), obs.size
        ([0, 0], [1, 0], 2)
        """
        if getattr(preds, "is_lazy", False):
            return None
        cell, outcome = cells_and_outcomes(preds)
        labeled = np.asarray(preds.labeled, dtype=bool)
        cell = np.asarray(cell, dtype=np.int64)
        if not labeled.all():
            cell = np.where(labeled, cell, -1)
        try:
            ids = preds.item_ids
        except KeyError:
            ids = None
        return cls.of(cell, outcome, ids)

    @property
    def size(self) -> int:
        return int(self.cell.size)


class Spec(ABC):
    """One assessment's model over its counts: the one thing :func:`~pbassess.inference.fit` reads.

    Subclasses set :attr:`reported` (the variables the assessment reports, name -> dims, the
    same for every inference), :attr:`coords`, :attr:`observed_name`, and implement the methods
    below; :attr:`observations` (per labeled item) may be ``None`` when only counts are known
    (a lazy pool too large to list), and the log-likelihood is then one value per cell.

    Examples
    --------
    >>> from pbassess.pymc_models.accuracy import BetaBernoulliSpec
    >>> spec = BetaBernoulliSpec(n=[3, 2], correct=[2, 0], alpha=1.0, beta=1.0, coords=["a", "b"])
    >>> isinstance(spec, Spec), spec.reported
    (True, {'accuracy': ('class',)})
    """

    #: Short name of the assessment family (used in messages).
    name: ClassVar[str] = "spec"
    #: Name of the observed variable in ``observed_data`` / ``log_likelihood``.
    observed_name: ClassVar[str] = "y"
    #: NUTS defaults of this model, under the user's ``sample_kwargs``.
    nuts_defaults: ClassVar[dict[str, Any]] = {}
    #: Variables kept from the NUTS trace beside the free variables (None: every variable).
    nuts_var_names: ClassVar[tuple[str, ...] | None] = None
    #: The ``prior`` group has the posterior's variables, dims and dtypes (both made by :meth:`complete`
    #: from draws of the same variables), so a deferred prior takes its layout from the posterior
    #: instead of drawing a probe (which compiles the model's prior graph: 6 s for BetaGP on ACS).
    #: Such a spec's :meth:`prior_draws` never returns ``None``.
    prior_layout_is_posterior: ClassVar[bool] = False

    reported: dict[str, tuple[str, ...]]
    coords: dict[str, Any]
    observations: Observations | None = None

    # -- the model ---------------------------------------------------------------------
    @property
    def diagnosed(self) -> list[str]:
        """The variables whose R-hat and ESS a NUTS fit checks (default: the reported ones)."""
        return list(self.reported)

    @property
    def has_conjugate(self) -> bool:
        """Whether :meth:`conjugate_draws` gives exact posterior draws."""
        return True

    def conjugate_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Exact posterior draws of the primary variables: ``{name: array (n_draws, ...)}``."""
        raise NotImplementedError(f"{self.name} has no conjugate posterior")

    @abstractmethod
    def prior_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        """Prior draws of the primary variables (``None``: draw from :meth:`model` instead)."""

    @abstractmethod
    def model(self):
        """The :class:`pymc.Model` over the same counts."""

    @abstractmethod
    def complete(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        """Every posterior variable (reported, derived and the model's free variables) from the primary draws.

        ``draws`` arrays have shape ``(chain, draw, ...)``; the result maps each name to
        ``(dims without chain/draw, array (chain, draw, ...))``. Applied to conjugate and NUTS
        draws alike, so both inferences hold the same variables.
        """

    @abstractmethod
    def log_likelihood(self, draws: Mapping[str, np.ndarray],
                       per_item: bool) -> tuple[tuple[str, ...], np.ndarray, dict[str, Any]]:
        """``(dims, values (chain, draw, ...), coords)`` of the log-likelihood, per labeled item or per cell.

        Per item the dim is ``item`` (coordinate from :attr:`observations`); per cell only the
        cells with observations are kept, and ``coords`` names them.
        """

    @abstractmethod
    def log_prior(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]] | None:
        """Log prior density of the prior's variables at the draws (``None``: ask PyMC)."""

    def exact_loo_pointwise(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Exact leave-one-item-out log predictive and the full-data log predictive of each item, or None."""
        return None

    @abstractmethod
    def observed_data(self) -> xr.Dataset:
        """The ``observed_data`` group."""

    @abstractmethod
    def constant_data(self) -> xr.Dataset:
        """The ``constant_data`` group (counts and prior parameters)."""

    @property
    def n_cells_observed(self) -> int:
        """Cells holding at least one observation (the per-cell log-likelihood keeps only these)."""
        return int(np.count_nonzero(np.asarray(self.cell_n()) > 0))

    @abstractmethod
    def cell_n(self) -> np.ndarray:
        """Observations per cell (flat)."""
