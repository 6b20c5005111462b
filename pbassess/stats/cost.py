"""Dirichlet posteriors of confusion probabilities and expected misclassification cost.

Conventions used throughout pbassess (rows are always the *predicted* class):

* ``counts[k, j]``: number of labeled items predicted as class k whose true class is j
  (:func:`pbassess.stats.confusion_counts`).
* ``confusion[k, j] = P(true = j | predicted = k)``: each row is a probability vector with a
  Dirichlet prior ``Dirichlet(alpha[k])`` and, by conjugacy, the exact posterior
  ``Dirichlet(alpha[k] + counts[k])``; rows are independent.
* ``cost[k, j]``: the cost of predicting class k when the truth is j (0 on the diagonal for the
  usual matrices). The expected cost of predicted class k is
  ``sum_j confusion[k, j] * cost[k, j]``; under the 0-1 cost it is ``1 - confusion[k, k]``,
  one minus the accuracy of the items predicted as k.

Plain NumPy (and the compiled Dirichlet sampler of :mod:`pbassess.stats.sampling`); no xarray.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.data.cifar100 import CIFAR100_CLASSES, CIFAR100_PEOPLE, CIFAR100_SUPERCLASSES
from pbassess.errors import ConfigError
from pbassess.stats.beta import check_pseudocount
from pbassess.stats.cost_file import read_cost_matrix_file
from pbassess.stats.sampling import as_generator, dirichlet_draws

__all__ = [
    "COST_MATRIX_NAMES", "cost_groups", "cost_matrix_name", "dirichlet_prior", "expected_cost_draws",
    "expected_cost_posterior_draws", "mean_probs_by_predicted", "people_cost_matrix", "read_cost_matrix_file",
    "resolve_cost_matrix", "superclass_cost_matrix", "validate_cost_matrix", "zero_one_cost",
]

#: Names accepted wherever a cost matrix is asked for (``cost_matrix=`` / ``--cost-matrix``).
COST_MATRIX_NAMES: tuple[str, ...] = ("zero-one", "people", "superclass")

#: Spellings of the 0-1 cost accepted besides ``"zero-one"``.
_ZERO_ONE_ALIASES = ("zero-one", "0-1", "zero_one", "zeroone")

#: Floor of an informed prior's mean probability, as a share of 1/K: keeps every alpha positive
#: when a model gives a class exactly zero probability.
_INFORMED_FLOOR = 1e-3

#: Largest number of floats held at once while drawing Dirichlet vectors (about 32 MB).
_CHUNK_FLOATS = 4_000_000


def dirichlet_prior(kind: str, n_classes: int, pseudocount: float = 2.0, mean_probs: Any = None) -> np.ndarray:
    """Dirichlet prior parameters of the confusion probabilities, one row per predicted class.

    Parameters
    ----------
    kind : {"uniform", "informed"}
        ``uniform``: ``alpha[k, j] = pc / K`` everywhere, a symmetric Dirichlet whose total
        strength is ``pc`` pseudo-observations per predicted class (the convention of the
        paper's code; with K = 2 it is the Beta(pc/2, pc/2) of
        :func:`pbassess.stats.beta_prior`). ``pseudocount=K`` gives the flat Dirichlet(1, ..., 1).
        ``informed``: ``alpha[k] = pc * m_k`` where ``m_k`` is the model's own mean probability
        vector over the pool items it predicts as k (see :func:`mean_probs_by_predicted`);
        entries are floored at ``1e-3 / K`` (then renormalised) so that every alpha is positive,
        and rows without any predicted item (NaN in ``mean_probs``) fall back to uniform.
    n_classes : int
        K.
    pseudocount : float, default 2.0
        pc, the prior's total strength per predicted class.
    mean_probs : array_like, shape (K, K), optional
        Row k: mean probability vector of the items predicted as k. Required for ``informed``.

    Returns
    -------
    ndarray, shape (K, K)
        ``alpha[k, j]`` for predicted class k and true class j.

    Examples
    --------
    >>> dirichlet_prior("uniform", 4).tolist()[0]
    [0.5, 0.5, 0.5, 0.5]
    >>> dirichlet_prior("informed", 2, 10, [[0.8, 0.2], [np.nan, np.nan]]).round(3).tolist()
    [[8.0, 2.0], [5.0, 5.0]]
    """
    k = int(n_classes)
    if k < 2:
        raise ConfigError(f"a confusion prior needs at least two classes, got n_classes={n_classes}")
    pc = check_pseudocount(pseudocount)
    uniform = np.full((k, k), pc / k)
    if kind == "uniform":
        return uniform
    if kind == "informed":
        if mean_probs is None:
            raise ConfigError("an informed prior needs the model's mean probability vector per predicted class")
        m = np.array(mean_probs, dtype=float)
        if m.shape != (k, k):
            raise ConfigError(f"mean_probs has shape {m.shape}, expected ({k}, {k})")
        empty = ~np.all(np.isfinite(m), axis=1)
        if (m[~empty] < 0).any():
            raise ConfigError("mean_probs must be non-negative")
        m[empty] = 1.0 / k
        m = np.maximum(m, _INFORMED_FLOOR / k)
        m /= m.sum(axis=1, keepdims=True)
        return pc * m
    raise ConfigError(f"unknown prior {kind!r} (choose 'uniform' or 'informed')")


def mean_probs_by_predicted(predicted: Any, probs: Any, n_classes: int) -> np.ndarray:
    """Mean probability vector of the items predicted as each class (NaN rows where none is).

    Parameters
    ----------
    predicted : array_like of int, shape (N,)
    probs : array_like, shape (N, K)
    n_classes : int

    Returns
    -------
    ndarray, shape (K, K)

    Examples
    --------
    >>> mean_probs_by_predicted([0, 0], [[0.9, 0.1], [0.7, 0.3]], 2).round(2).tolist()
    [[0.8, 0.2], [nan, nan]]
    """
    p = np.asarray(predicted, dtype=np.int64).ravel()
    q = np.asarray(probs, dtype=float)
    if q.shape != (p.size, n_classes):
        raise ConfigError(f"probs has shape {q.shape}, expected ({p.size}, {n_classes})")
    from pbassess.counting.core import cell_counts

    # one row of sums per class column: cell_counts batches over the leading dim
    sums = cell_counts(np.broadcast_to(p, (n_classes, p.size)), n_classes, weights=q.T).T
    n = cell_counts(p, n_classes).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / n[:, None]


def zero_one_cost(n_classes: int) -> np.ndarray:
    """The 0-1 cost: every mistake costs 1, a correct prediction 0.

    Examples
    --------
    >>> zero_one_cost(2).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    return 1.0 - np.eye(int(n_classes))


def validate_cost_matrix(cost_matrix: Any, n_classes: int) -> np.ndarray:
    """Check a user cost matrix: shape (K, K), finite, non-negative.

    ``cost[k, j]`` is the cost of predicting k when the truth is j.

    Examples
    --------
    >>> validate_cost_matrix([[0, 1], [5, 0]], 2).tolist()
    [[0.0, 1.0], [5.0, 0.0]]
    >>> validate_cost_matrix([[0, -1], [1, 0]], 2)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: cost_matrix[0, 1] is -1: costs must be non-negative
    """
    try:
        c = np.array(cost_matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cost_matrix must be a numeric (K, K) array: {exc}") from None
    if c.shape != (n_classes, n_classes):
        raise ConfigError(f"cost_matrix has shape {c.shape}, expected ({n_classes}, {n_classes}) for {n_classes} classes")
    bad = ~np.isfinite(c)
    if bad.any():
        k, j = np.argwhere(bad)[0]
        raise ConfigError(f"cost_matrix[{k}, {j}] is {c[k, j]}: costs must be finite")
    if (c < 0).any():
        k, j = np.argwhere(c < 0)[0]
        raise ConfigError(f"cost_matrix[{k}, {j}] is {c[k, j]:g}: costs must be non-negative")
    return c


def _check_known(classes: Sequence[str], known: set[str], what: str) -> list[str]:
    names = [str(c) for c in classes]
    unknown = [c for c in names if c not in known]
    if unknown:
        shown = ", ".join(repr(c) for c in unknown[:8]) + (", ..." if len(unknown) > 8 else "")
        raise ConfigError(f"{what}: {len(unknown)} class name(s) not known: {shown}")
    return names


def people_cost_matrix(
    classes: Sequence[str] = CIFAR100_CLASSES, *, side: str = "true", mistake_cost: float = 10.0
) -> np.ndarray:
    """The paper's CIFAR-100 "people" cost matrix: mistakes on people cost 10x.

    ``cost[k, j]`` (predict k, truth j) is 0 on the diagonal, ``mistake_cost`` (10) where
    k != j and the *true* class j is one of the five people classes (baby, boy, girl, man,
    woman), and 1 for every other mistake. With ``side="either"`` a mistake also costs 10
    when the *predicted* class k is a people class (the matrix is then symmetric).

    Parameters
    ----------
    classes : sequence of str
        CIFAR-100 class names in the order of the prediction set (default: the standard order).
    side : {"true", "either"}
    mistake_cost : float, default 10

    Examples
    --------
    >>> c = people_cost_matrix(["apple", "baby", "boy"])
    >>> c.tolist()
    [[0.0, 10.0, 10.0], [1.0, 0.0, 10.0], [1.0, 10.0, 0.0]]
    """
    names = _check_known(classes, set(CIFAR100_CLASSES), "people cost matrix (CIFAR-100 classes only)")
    if side not in ("true", "either"):
        raise ConfigError(f"side must be 'true' or 'either', got {side!r}")
    people = np.array([c in CIFAR100_PEOPLE for c in names])
    heavy = np.broadcast_to(people[None, :], (len(names), len(names))).copy()
    if side == "either":
        heavy |= people[:, None]
    cost = np.where(heavy, float(mistake_cost), 1.0)
    np.fill_diagonal(cost, 0.0)
    return cost


def superclass_cost_matrix(
    classes: Sequence[str] = CIFAR100_CLASSES,
    superclasses: Mapping[str, Sequence[str]] = CIFAR100_SUPERCLASSES,
    *,
    mistake_cost: float = 10.0,
) -> np.ndarray:
    """The paper's CIFAR-100 superclass cost matrix: mistakes across superclasses cost 10x.

    ``cost[k, j]`` is 0 when k == j, 1 when k != j lie in the same superclass and
    ``mistake_cost`` (10) when they lie in different superclasses. Symmetric.

    Parameters
    ----------
    classes : sequence of str
        Class names in the order of the prediction set.
    superclasses : mapping of superclass name to its classes
        Default: the standard 20 CIFAR-100 superclasses of 5 classes each.
    mistake_cost : float, default 10

    Examples
    --------
    >>> superclass_cost_matrix(["baby", "boy", "bee"]).tolist()
    [[0.0, 1.0, 10.0], [1.0, 0.0, 10.0], [10.0, 10.0, 0.0]]
    """
    group_of = {str(c): g for g, members in superclasses.items() for c in members}
    names = _check_known(classes, set(group_of), "superclass cost matrix")
    groups = np.array([group_of[c] for c in names], dtype=object)
    cost = np.where(groups[:, None] == groups[None, :], 1.0, float(mistake_cost))
    np.fill_diagonal(cost, 0.0)
    return cost


def expected_cost_draws(confusion_draws: Any, cost_matrix: Any) -> np.ndarray:
    """Expected cost per predicted class in each draw: ``sum_j confusion[..., k, j] * cost[k, j]``.

    Parameters
    ----------
    confusion_draws : array_like, shape (..., K, K)
        Draws of ``P(true = j | predicted = k)`` (rows predicted, columns true).
    cost_matrix : array_like, shape (K, K)
        ``cost[k, j]``: cost of predicting k when the truth is j.

    Returns
    -------
    ndarray, shape (..., K)

    Examples
    --------
    >>> expected_cost_draws([[[0.9, 0.1], [0.3, 0.7]]], zero_one_cost(2)).round(2).tolist()
    [[0.1, 0.3]]
    """
    theta = np.asarray(confusion_draws, dtype=float)
    cost = np.asarray(cost_matrix, dtype=float)
    if theta.shape[-2:] != cost.shape or cost.ndim != 2:
        raise ConfigError(f"confusion draws end in shape {theta.shape[-2:]} but the cost matrix is {cost.shape}")
    return np.einsum("...kj,kj->...k", theta, cost)


def cost_groups(alpha: Any, cost_matrix: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aggregate each row's Dirichlet parameters over cells of equal cost.

    By the aggregation property of the Dirichlet, the masses of groups of cells are again
    Dirichlet with summed parameters, and the expected cost of a row depends only on the mass of
    each distinct cost value.

    Returns
    -------
    group_alpha : ndarray, shape (K, G)
        Summed parameters; rows with fewer than G distinct costs are padded with zeros.
    group_cost : ndarray, shape (K, G)
    n_groups : ndarray of int, shape (K,)

    Examples
    --------
    >>> a, c, g = cost_groups([[1.0, 2.0, 3.0]], [[0.0, 1.0, 1.0]])
    >>> a.tolist(), c.tolist(), g.tolist()
    ([[1.0, 5.0]], [[0.0, 1.0]], [2])
    """
    from pbassess.counting.core import cell_counts

    al = np.asarray(alpha, dtype=float)
    cost = np.asarray(cost_matrix, dtype=float)
    k = al.shape[0]
    values = [np.unique(row) for row in cost]
    n_groups = np.array([v.size for v in values])
    width = int(n_groups.max())
    group_alpha = np.zeros((k, width))
    group_cost = np.zeros((k, width))
    idx = np.stack([np.searchsorted(vals, cost[row]) for row, vals in enumerate(values)])
    group_alpha[:] = cell_counts(idx, width, weights=al)
    for row, vals in enumerate(values):
        group_cost[row, : vals.size] = vals
    return group_alpha, group_cost, n_groups


def expected_cost_posterior_draws(posterior_alpha: Any, cost_matrix: Any, n_draws: int, seed: Any = None) -> np.ndarray:
    """Exact draws of the expected cost per predicted class under Dirichlet posteriors.

    Each row's cells are first aggregated by cost value (:func:`cost_groups`), so a 0-1 cost
    needs one Beta-like draw per row instead of K; rows are then drawn with
    :func:`pbassess.stats.dirichlet_draws` in chunks so that memory stays bounded
    (at most ~32 MB) whatever K and ``n_draws``.

    Parameters
    ----------
    posterior_alpha : array_like, shape (K, K)
        ``alpha + counts``.
    cost_matrix : array_like, shape (K, K)
    n_draws : int
    seed : int or Generator, optional

    Returns
    -------
    ndarray, shape (n_draws, K)

    Examples
    --------
    >>> d = expected_cost_posterior_draws([[8.0, 2.0], [1.0, 1.0]], zero_one_cost(2), 20000, seed=0)
    >>> d.shape, bool(abs(d[:, 0].mean() - 0.2) < 0.01)
    ((20000, 2), True)
    """
    rng = as_generator(seed)
    group_alpha, group_cost, n_groups = cost_groups(posterior_alpha, cost_matrix)
    k = group_alpha.shape[0]
    out = np.empty((int(n_draws), k))
    for width in np.unique(n_groups):
        rows = np.flatnonzero(n_groups == width)
        if width == 1:  # a row whose cells all cost the same: its expected cost is that cost
            out[:, rows] = group_cost[rows, 0]
            continue
        a = group_alpha[rows, :width]
        c = group_cost[rows, :width]
        chunk = max(1, _CHUNK_FLOATS // a.size)
        for start in range(0, out.shape[0], chunk):
            stop = min(start + chunk, out.shape[0])
            out[start:stop, rows] = expected_cost_draws(dirichlet_draws(a, stop - start, rng), c)
    return out


# ---------------------------------------------------------------------------- one resolver
def cost_matrix_name(spec: Any) -> str:
    """How a cost-matrix spec is recorded: its name, the resolved file path, or ``"user"`` for an array.

    Examples
    --------
    >>> cost_matrix_name(None), cost_matrix_name("0-1"), cost_matrix_name("people"), cost_matrix_name([[0]])
    ('zero-one', 'zero-one', 'people', 'user')
    """
    import os
    from pathlib import Path

    if spec is None:
        return "zero-one"
    if isinstance(spec, str) and spec.strip().lower() in _ZERO_ONE_ALIASES:
        return "zero-one"
    if isinstance(spec, str) and spec.strip() in COST_MATRIX_NAMES:
        return spec.strip()
    if isinstance(spec, (str, os.PathLike)):
        return str(Path(os.fspath(spec)).resolve())
    return "user"


def resolve_cost_matrix(spec: Any, classes: Sequence[str]) -> np.ndarray:
    """The one way pbassess turns a ``cost_matrix=`` / ``--cost-matrix`` value into a (K, K) array.

    ``cost[k, j]`` is the cost of predicting class k when the truth is j (rows predicted,
    columns true).

    Parameters
    ----------
    spec : None, str, path or array_like
        ``None`` or ``"zero-one"`` (also ``"0-1"``): every mistake costs 1;
        ``"people"`` / ``"superclass"``: the paper's CIFAR-100 matrices
        (:func:`people_cost_matrix`, :func:`superclass_cost_matrix`; the classes must be CIFAR-100
        names); a (K, K) array; or a file: ``.csv`` / text (K rows of K numbers, optionally with a
        header row and a first column of class names, which are then put in the order of
        ``classes``; see :func:`read_cost_matrix_file`), ``.npy`` or ``.json`` (a list of rows, or
        ``{"cost": rows}``).
    classes : sequence of str
        The K class names of the prediction set, in order.

    Returns
    -------
    ndarray, shape (K, K)
        Finite, non-negative costs.

    Raises
    ------
    ConfigError
        One line naming the problem: unknown name, missing or unreadable file, wrong shape, a
        non-numeric, NaN, infinite or negative entry (with its row and column).

    Examples
    --------
    >>> resolve_cost_matrix("zero-one", ["a", "b"]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    >>> resolve_cost_matrix([[0, 2], [1, 0]], ["a", "b"]).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    >>> resolve_cost_matrix("cheap", ["a", "b"])
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: cost matrix 'cheap' is neither a known name (zero-one, people, superclass) nor an existing file
    """
    import os
    from pathlib import Path

    names = [str(c) for c in classes]
    k = len(names)
    if spec is None:
        return zero_one_cost(k)
    if isinstance(spec, (str, os.PathLike)):
        text = os.fspath(spec)
        key = text.strip() if isinstance(text, str) else text
        if isinstance(key, str) and key.lower() in _ZERO_ONE_ALIASES:
            return zero_one_cost(k)
        if key == "people":
            return people_cost_matrix(names)
        if key == "superclass":
            return superclass_cost_matrix(names)
        path = Path(text)
        if not path.is_file():
            raise ConfigError(f"cost matrix {text!r} is neither a known name ({', '.join(COST_MATRIX_NAMES)}) "
                              "nor an existing file")
        return read_cost_matrix_file(path, names)
    if isinstance(spec, bytes):
        raise ConfigError("the cost matrix must be a name, a file path or a (K, K) array, not bytes")
    return validate_cost_matrix(spec, k)
