"""The Beta-binomial log marginal likelihood, written once (and its gradient).

``k`` successes in ``n`` trials whose rate is ``theta ~ Beta(a, b)``, with ``theta`` integrated
out::

    log p(k | n, a, b) = log C(n, k) + log B(a + k, b + n - k) - log B(a, b)

:func:`beta_binomial_log_marginal` is this (with or without ``log C(n, k)``, which does not
depend on ``a``, ``b``), batched over any broadcastable shapes; :func:`beta_binomial_log_marginal_grad`
gives the digamma differences that make up its gradient in ``a`` and ``b``. Every place in
pbassess that needs the Beta-binomial marginal (the empirical-Bayes and region-offset fits of
:mod:`pbassess.estimation`, the lookahead predictive of active comparison) calls these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

__all__ = ["beta_binomial_log_marginal", "beta_binomial_log_marginal_grad"]


def _arrays(k: Any, n: Any, a: Any, b: Any, strength: Any):
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    ab = a + b if strength is None else np.asarray(strength, dtype=float)
    return k, n, a, b, ab


def beta_binomial_log_marginal(k: Any, n: Any, a: Any, b: Any, *, coefficient: bool = True,
                               strength: Any = None) -> np.ndarray:
    """Log probability of ``k`` successes in ``n`` trials with a Beta(a, b) rate integrated out.

    Parameters
    ----------
    k, n : array_like
        Successes and trials (``0 <= k <= n``; ``n = 0`` gives 0).
    a, b : array_like
        Beta parameters (positive); all four broadcast together.
    coefficient : bool
        Include ``log C(n, k)`` (the log probability mass); ``False`` gives the part that depends
        on ``a`` and ``b`` (what a likelihood in ``a``, ``b`` needs).
    strength : array_like, optional
        ``a + b`` when the caller holds it already (a prior written as mean x strength): used as
        given instead of recomputing the sum, so the value is bit-for-bit the caller's.

    Returns
    -------
    numpy.ndarray
        Elementwise log marginal likelihood (the broadcast shape).

    Examples
    --------
    >>> from scipy.stats import betabinom
    >>> v = beta_binomial_log_marginal([3, 0, 10], [10, 4, 10], 2.0, [1.5, 0.5, 8.0])
    >>> bool(np.allclose(v, betabinom.logpmf([3, 0, 10], [10, 4, 10], 2.0, [1.5, 0.5, 8.0])))
    True
    >>> float(beta_binomial_log_marginal(1, 1, 1.0, 1.0, coefficient=False)) == float(np.log(0.5))
    True
    """
    k, n, a, b, ab = _arrays(k, n, a, b, strength)
    value = (special.gammaln(a + k) - special.gammaln(a) + special.gammaln(b + n - k) - special.gammaln(b)
             - special.gammaln(ab + n) + special.gammaln(ab))
    if coefficient:
        value = value + special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return value


def beta_binomial_log_marginal_grad(k: Any, n: Any, a: Any, b: Any, *,
                                    strength: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The digamma differences of the gradient of :func:`beta_binomial_log_marginal` in ``a`` and ``b``.

    Returns ``(da, db, dab)`` with ``da = psi(a + k) - psi(a)``, ``db = psi(b + n - k) - psi(b)``
    and ``dab = psi(a + b) - psi(a + b + n)``, so that ``d/da = da + dab`` and ``d/db = db + dab``.
    Kept apart because a chain rule through a mean and a strength (``a = mu tau``,
    ``b = (1 - mu) tau``) uses them apart: ``d/dmu = tau (da - db)``,
    ``d/dtau = mu da + (1 - mu) db + dab``.

    Examples
    --------
    >>> da, db, dab = beta_binomial_log_marginal_grad(3, 10, 2.0, 1.5)
    >>> h = 1e-6
    >>> num = (beta_binomial_log_marginal(3, 10, 2.0 + h, 1.5) - beta_binomial_log_marginal(3, 10, 2.0 - h, 1.5)) / (2 * h)
    >>> bool(abs((da + dab) - num) < 1e-6)
    True
    """
    k, n, a, b, ab = _arrays(k, n, a, b, strength)
    da = special.digamma(a + k) - special.digamma(a)
    db = special.digamma(b + n - k) - special.digamma(b)
    dab = special.digamma(ab) - special.digamma(ab + n)
    return da, db, dab
