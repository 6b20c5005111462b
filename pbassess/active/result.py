"""The result of :func:`pbassess.active.simulate`: :class:`SimulationResult`.

It holds the run curves of every (strategy, prior) as xarray and offers what every pbassess
result offers: ``summary()`` (labels to MRR 0.99 with its confidence interval over runs, MRR and
success after 10% of the pool), ``sentence()``, ``plot()``, ``to_json()`` (the
``pbassess simulate --json`` object plus the shared keys ``metric``, ``inference``, ``ci_prob``,
``diagnostics``, ``sentence``), ``save(path)`` and ``pbassess.load_result(path)``.

For code written against the earlier return value (an :class:`xarray.Dataset`), the result
also behaves like that Dataset: ``result["mrr"]``, ``result.sel(...)``, ``result.attrs``,
``result.sizes``; :attr:`SimulationResult.dataset` is the Dataset itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.active.evaluation import labels_to_mrr, labels_to_mrr_interval
from pbassess.results.base import AssessmentResult

__all__ = ["SimulationResult"]

#: Variables of the run curves (dims strategy, prior, run, step); the rest are per-class counts.
_CURVES = ("mrr", "success", "error", "agreement")

#: The MRR level whose first crossing defines "labels to MRR".
MRR_THRESHOLD = 0.99


class SimulationResult(AssessmentResult):
    """Replicate runs of active-assessment strategies on a fully labeled pool.

    ``posterior`` holds the run curves ``mrr``, ``success``, ``error``, ``agreement`` (share of the
    true top-m set found; results saved before it existed lack it) with dims
    ``(strategy, prior, run, step)`` (coordinates ``labels`` and ``fraction`` along ``step``);
    ``counts`` holds ``labels_per_class`` ``(strategy, prior, class)`` and ``seconds``
    ``(strategy, prior)``; ``options`` the settings (target, metric, direction, top_m,
    log_every, n_items, pseudocount, seed, batch_size, compile_seconds, name, true_top).
    ``ci_prob`` is the coverage of the interval of labels to MRR
    (:func:`~pbassess.active.evaluation.labels_to_mrr_interval`).

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active import simulate
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> r = simulate(p, strategies="ts", runs=3, log_every=1, seed=0)
    >>> sorted(r.to_json()["strategies"]), r.to_json()["inference"]
    (['ts'], 'conjugate')
    >>> dict(r["mrr"].sizes)  # behaves like the Dataset simulate used to return
    {'strategy': 1, 'prior': 1, 'run': 3, 'step': 4}
    """

    metric = "active-simulation"

    # ------------------------------------------------------------------ the Dataset view
    @property
    def dataset(self):
        """All curves, counts and settings as one :class:`xarray.Dataset` (attrs = the settings)."""
        import xarray as xr

        ds = xr.merge([self.posterior, self.counts], compat="override", join="outer")
        ds.attrs = dict(self.options)
        return ds

    def __getitem__(self, name: str):
        return self.dataset[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("posterior", "counts", "options"):
            raise AttributeError(name)
        try:
            return getattr(self.dataset, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None

    # ------------------------------------------------------------------ numbers
    def _curves(self, strategy: str, prior: str, var: str = "mrr") -> np.ndarray:
        return self.posterior[var].sel(strategy=strategy, prior=prior).to_numpy().astype(float)

    def _combos(self):
        for s in self.posterior["strategy"].to_numpy():
            for p in self.posterior["prior"].to_numpy():
                yield str(s), str(p)

    def labels_to_mrr(self, threshold: float = MRR_THRESHOLD) -> dict[tuple[str, str], float]:
        """(strategy, prior) -> fraction of the pool labeled when the run-averaged MRR first reaches ``threshold``."""
        labels = self.posterior["labels"].to_numpy()
        n = int(self.options["n_items"])
        return {c: labels_to_mrr(self._curves(*c), labels, n, threshold) for c in self._combos()}

    def summary(self, threshold: float = MRR_THRESHOLD):
        """One row per (strategy, prior): labels to MRR with its confidence interval over runs, and more.

        Columns: ``labels_to_mrr`` (fraction of the pool; NaN if never reached),
        ``labels_to_mrr_low`` / ``_high`` (``ci_prob`` confidence interval of the expected MRR curve's
        crossing, :func:`~pbassess.active.evaluation.labels_to_mrr_interval`; 1 at the upper end when
        the runs cannot certify the threshold),
        ``mrr_at_10pct``, ``success_at_10pct``, ``agreement_at_10pct`` (run-averaged share of the
        true top-m set found; NaN for results saved without it), ``final_mrr``, ``seconds``.
        """
        import pandas as pd

        labels = self.posterior["labels"].to_numpy()
        n = int(self.options["n_items"])
        tenth = min(int(np.searchsorted(labels, 0.1 * n)), labels.size - 1)
        seed = int(self.options.get("seed", 0)) if int(self.options.get("seed", 0)) >= 0 else 0
        rows = []
        for s, p in self._combos():
            mrr = self._curves(s, p)
            low, high = labels_to_mrr_interval(mrr, labels, n, threshold, prob=self.ci_prob, n_boot=200, seed=seed)
            rows.append({
                "strategy": s, "prior": p, "labels_to_mrr": labels_to_mrr(mrr, labels, n, threshold),
                "labels_to_mrr_low": low, "labels_to_mrr_high": high,
                "mrr_at_10pct": float(mrr[:, tenth].mean()),
                "success_at_10pct": float(self._curves(s, p, "success")[:, tenth].mean()),
                "agreement_at_10pct": (float(self._curves(s, p, "agreement")[:, tenth].mean())
                                       if "agreement" in self.posterior else float("nan")),
                "final_mrr": float(mrr[:, -1].mean()),
                "seconds": float(self.counts["seconds"].sel(strategy=s, prior=p)),
            })
        return pd.DataFrame(rows)

    def sentence(self) -> str:
        """Which strategy needs the fewest labels, and how many (ties and "never" said as such)."""
        opts = self.options
        what = f"the {opts['direction']} {opts['metric']} class" if int(opts["top_m"]) == 1 else (
            f"the {opts['top_m']} classes of {opts['direction']} {opts['metric']}")
        fractions = self.labels_to_mrr()
        reached = {c: v for c, v in fractions.items() if v == v}
        runs = int(self.posterior.sizes["run"])
        where = f"On {opts.get('name', 'the pool')}, finding {what} (true: {opts.get('true_top', '?')})"
        if not reached:
            return f"{where}: no strategy reaches a run-averaged MRR of {MRR_THRESHOLD} within the budget ({runs} runs)."
        best = min(reached.values())
        winners = [c for c, v in reached.items() if v == best]
        several = self.posterior.sizes["prior"] > 1
        names = [f"{s} ({p} prior)" if several else s for s, p in winners]
        who = names[0] if len(names) == 1 else "tied: " + ", ".join(names)
        tail = ""
        if len(fractions) > len(winners):
            slowest = max(fractions.values(), key=lambda v: 2.0 if v != v else v)
            tail = "; the slowest never gets there" if slowest != slowest else f" (the slowest needs {slowest:.0%})"
        return (f"{where} to a run-averaged MRR of {MRR_THRESHOLD} takes {best:.0%} of the pool with {who}"
                f"{tail}, over {runs} runs.")

    def to_json(self) -> dict[str, Any]:
        """The ``pbassess simulate --json`` object.

        Keys: ``target``, ``top_m``, ``log_every``, ``seconds`` (wall time of the runs),
        ``compile_seconds``, ``strategies`` (for the first prior: ``{name: {"labels_to_mrr",
        "labels_to_mrr_interval", "mrr", "success", "agreement"}}``, ``mrr[i]`` / ``success[i]`` /
        ``agreement[i]`` run averages after ``(i + 1) * log_every`` labels), ``priors`` (the same for every prior), and the
        keys every result shares: ``metric``, ``inference`` (``"conjugate"``), ``ci_prob``,
        ``diagnostics``, ``sentence``.
        """
        from pbassess._json import to_jsonable

        table = self.summary()
        by_prior: dict[str, dict[str, Any]] = {}
        for row in table.itertuples():
            sel = self.posterior.sel(strategy=row.strategy, prior=row.prior)
            by_prior.setdefault(row.prior, {})[row.strategy] = {
                "labels_to_mrr": row.labels_to_mrr,
                "labels_to_mrr_interval": [row.labels_to_mrr_low, row.labels_to_mrr_high],
                "mrr": sel["mrr"].mean("run").to_numpy().round(6).tolist(),
                "success": sel["success"].mean("run").to_numpy().round(6).tolist(),
            }
            if "agreement" in sel:
                by_prior[row.prior][row.strategy]["agreement"] = sel["agreement"].mean("run").to_numpy().round(6).tolist()
        first = str(self.posterior["prior"].to_numpy()[0])
        opts = self.options
        return to_jsonable({
            "target": opts["target"], "top_m": int(opts["top_m"]), "log_every": int(opts["log_every"]),
            "seconds": float(self.counts["seconds"].sum()), "compile_seconds": float(opts["compile_seconds"]),
            "strategies": by_prior[first], "priors": by_prior, "metric": opts["metric"], "inference": "conjugate",
            "ci_prob": self.ci_prob, "diagnostics": self._diagnostics(), "sentence": self.sentence(),
        })

    def _diagnostics(self) -> dict[str, Any]:
        runs = int(self.posterior.sizes["run"])
        return {"ok": True, "runs": runs,
                "method": "exact conjugate updates in every run; labels-to-MRR intervals are confidence intervals "
                          "over runs for the expected MRR curve's crossing (Monte Carlo error, not posterior "
                          "uncertainty)"}

    def plot(self, threshold: float = MRR_THRESHOLD, **kwargs: Any):
        """MRR curves, success curves and labels to MRR side by side (:func:`pbassess.plots.active.plot_active`)."""
        from pbassess.plots.active import plot_active

        return plot_active(self, threshold=threshold)
