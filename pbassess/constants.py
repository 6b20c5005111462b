"""Project-wide defaults, kept in one place and referenced everywhere."""

from __future__ import annotations

#: Credible mass of every highest-density interval pbassess reports by default.
CI_PROB: float = 0.95

#: Tolerance for probability vectors summing to one.
SUM_TOLERANCE: float = 1e-3

#: Default number of equal-width calibration bins.
DEFAULT_BINS: int = 10

#: Default pseudocount of the Beta / Dirichlet priors.
DEFAULT_PSEUDOCOUNT: float = 2.0

#: Default posterior draws **per chain** of every fit, conjugate or NUTS (4 chains: 4,000 draws).
DEFAULT_DRAWS: int = 1000

#: Default Monte Carlo draws of a computation without chains (``n_draws``: Bayesian bootstrap,
#: a labeling session's posterior, the shift table's intervals).
DEFAULT_N_DRAWS: int = 4000

#: Default decision threshold for binary-score data: the positive class where score > threshold.
DEFAULT_THRESHOLD: float = 0.5

#: Class of a binary score equal to the threshold: "negative" (scikit-learn's ``predict``) or "positive".
DEFAULT_TIES: str = "negative"

#: Label value of an unlabeled item in integer label arrays.
UNLABELED: int = -1

#: Environment variable naming a local mirror of the public prediction sets.
DATA_DIR_ENV: str = "PBASSESS_DATA_DIR"

#: Environment variable naming the download cache (default ``~/.cache/pbassess``).
CACHE_DIR_ENV: str = "PBASSESS_CACHE_DIR"
