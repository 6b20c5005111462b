"""The posterior of a labeling session at one moment: :class:`SessionPosterior` and how it is built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pbassess._json import to_jsonable
from pbassess.active.model import cell_counts
from pbassess.active.select import target_answer
from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError
from pbassess.results.base import AssessmentResult
from pbassess.stats import beta_hdi, hdi_from_draws

__all__ = ["SessionPosterior", "session_posterior"]


def session_posterior(model_for: Callable[[str], Any], pool: Any, cfg: dict[str, Any], labeled: tuple[np.ndarray, np.ndarray],
                      progress: dict[str, Any], *, n_draws: int, rng: np.random.Generator,
                      ci_prob: float = CI_PROB) -> SessionPosterior:
    """Draw the session's posterior: accuracy (and ECE or cost) per class, the answer and its probability.

    ``model_for(target)`` builds the arms' posterior for a target from the session's labels
    (:func:`pbassess.active.arms.build_target_model`); ``labeled`` holds the labeled pool
    indices and their class indices; ``progress`` the counters ``outstanding``,
    ``batches_issued``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.active import LabelingSession
    >>> pool = Predictions.from_top1(["a", "b"] * 10, [0.9] * 20)
    >>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json", target="least-accurate", seed=0)
    >>> post = s.posterior(seed=0)  # LabelingSession.posterior calls session_posterior with the session's state
    >>> type(post).__name__, post.summary()["labeled"].tolist()
    ('SessionPosterior', [0, 0])
    """
    import xarray as xr

    target, m = cfg["target"], cfg["top_m"]
    classes = np.asarray(pool.classes, dtype=str)
    acc_model = model_for("least-accurate")
    acc_draws = acc_model.metric_draws(int(n_draws), rng)
    data = {"accuracy": (("chain", "draw", "class"), acc_draws[None])}
    valid = acc_model.valid
    metric, metric_draws = "accuracy", acc_draws
    if target in ("most-miscalibrated", "highest-cost"):
        model = model_for(target)
        metric = model.metric_name
        metric_draws = model.metric_draws(int(n_draws), rng)
        data[metric] = (("chain", "draw", "class"), metric_draws[None])
    if target == "estimation":
        a, b = acc_model.alpha, acc_model.beta
        sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        order = np.lexsort((np.arange(sd.size), -np.where(valid, sd, -np.inf)))
        answer, probability, p_member = [int(a) for a in order[:m]], None, np.full(sd.size, np.nan)
    else:
        answer, probability, p_member = target_answer(metric_draws, valid, m, lowest=target == "least-accurate")
    idx, lab = labeled
    k = pool.n_classes
    given = np.full(pool.n_items, -1, dtype=np.int64)
    given[idx] = lab  # the labels of the session (the pool's own are ignored)
    cells = cell_counts(pool.predicted, pool.confidence, k, ("predicted",), labels=given)
    counts = xr.Dataset(
        {
            "pool": ("class", cells["n_pool"].to_numpy().astype(np.int64)),
            "labeled": ("class", cells["n"].to_numpy().astype(np.int64)),
            "correct": ("class", cells["correct"].to_numpy().astype(np.int64)),
            "accuracy_alpha": ("class", acc_model.alpha),
            "accuracy_beta": ("class", acc_model.beta),
            "p_answer": ("class", p_member),
        },
        coords={"class": classes},
    )
    posterior = xr.Dataset(data, coords={"chain": [0], "draw": np.arange(int(n_draws)), "class": classes})
    options = {
        "target": target, "top_m": m, "strategy": cfg["strategy"], "metric": metric,
        "answer": [str(classes[a]) for a in answer], "probability": probability,
        "outstanding": progress["outstanding"], "batches_issued": progress["batches_issued"],
        "labeled": int(idx.size), "exhausted": bool(int(idx.size) + progress["outstanding"] >= pool.n_items),
    }
    cost_matrix = cfg.get("cost_source", "zero-one")
    prior = {"kind": cfg["prior"], "pseudocount": cfg["pseudocount"], "bins": cfg["bins"],
             "cost_matrix": cost_matrix, "cost": cost_matrix}  # "cost": the key's earlier name
    return SessionPosterior(posterior, counts, prior=prior, data_summary=pool.describe() | {"n_labeled": int(idx.size)},
                            engine="conjugate", ci_prob=ci_prob, options=options)


def _estimate_clause(estimate: dict[str, Any] | None, ci_prob: float) -> str:
    """The sentence on the pool's accuracy from the session's estimates (IPW when the design gives one)."""
    if not estimate:
        return ""
    pct = f"{100 * ci_prob:g}%"
    ipw, plain = estimate.get("ipw"), estimate["plain"]
    if ipw is not None and ipw["mean"] is not None:
        return (f" The pool's accuracy is {ipw['mean']:.3f} ({pct} interval {ipw['ci'][0]:.3f}-{ipw['ci'][1]:.3f}, "
                f"inverse-probability weighted over {ipw['items_visited']} visited items; plain mean of the "
                f"labels {plain['mean']:.3f}).")
    if plain["mean"] is not None and ipw is None:
        return (f" The mean of the labels is {plain['mean']:.3f} ({pct} interval {plain['ci'][0]:.3f}-"
                f"{plain['ci'][1]:.3f}).")
    return ""


class SessionPosterior(AssessmentResult):
    """The posterior of a labeling session at one moment (returned by :meth:`LabelingSession.posterior`).

    ``posterior`` holds draws of ``accuracy`` (and ``ece`` or ``cost`` for those targets) with
    dims ``(chain, draw, class)``; ``counts`` holds per class the pool size, labels, correct
    labels, the accuracy's Beta parameters and ``p_answer``; ``options`` the target, ``top_m``,
    ``answer`` and ``probability``. Accuracy HDIs are exact (Beta); ECE and cost HDIs come
    from the draws.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.active import LabelingSession
    >>> pool = Predictions.from_top1(["a", "b"] * 10, [0.9] * 20)
    >>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json",
    ...                           target="least-accurate", batch_size=6, seed=0)
    >>> _ = s.add_labels({i: "a" for i in s.next_batch()["item_id"]})  # every label says "a"
    >>> post = s.posterior(seed=0)
    >>> type(post).__name__, post.options["target"]
    ('SessionPosterior', 'least-accurate')
    >>> t = post.summary()
    >>> t[["labeled", "correct"]].to_dict("index")
    {'a': {'labeled': 4, 'correct': 4}, 'b': {'labeled': 2, 'correct': 0}}
    >>> bool(((1 + t["correct"]) / (2 + t["labeled"]) == t["accuracy_mean"]).all())  # Beta(1 + k, 1 + n - k)
    True
    """

    # Saved results record ``module:Class``; keep the path they have always recorded (the
    # module re-exports this class), so files written now load in older versions too.
    __module__ = "pbassess.active.session_result"

    metric = "labeling-session"

    def summary(self):
        """One row per class: pool size, labels, posterior mean and HDI of the target's metric and accuracy, P(answer)."""
        import pandas as pd

        c = self.counts
        alpha, beta = c["accuracy_alpha"].to_numpy(), c["accuracy_beta"].to_numpy()
        acc_hdi = beta_hdi(alpha, beta, self.ci_prob)
        frame = pd.DataFrame(
            {
                "pool": c["pool"].to_numpy(), "labeled": c["labeled"].to_numpy(), "correct": c["correct"].to_numpy(),
                "accuracy_mean": alpha / (alpha + beta), "accuracy_hdi_low": acc_hdi[:, 0],
                "accuracy_hdi_high": acc_hdi[:, 1],
            },
            index=pd.Index(c["class"].to_numpy().astype(str), name="class"),
        )
        metric = self.options.get("metric", "accuracy")
        if metric != "accuracy":
            draws = self.draws(metric)
            hdi = hdi_from_draws(draws, self.ci_prob)
            frame[f"{metric}_mean"] = draws.mean(axis=0)
            frame[f"{metric}_hdi_low"] = hdi[:, 0]
            frame[f"{metric}_hdi_high"] = hdi[:, 1]
        frame["p_answer"] = c["p_answer"].to_numpy()
        return frame

    def _accuracy_sd(self) -> np.ndarray:
        a, b = self.counts["accuracy_alpha"].to_numpy(), self.counts["accuracy_beta"].to_numpy()
        return np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))

    def sentence(self) -> str:
        """One sentence with the answer and its posterior probability."""
        opts = self.options
        n, answer, m, target = opts["labeled"], opts["answer"], opts["top_m"], opts["target"]
        names = ", ".join(repr(a) for a in answer)
        when = f"After {n} labels" if n else "With no labels yet (prior only)"
        if target == "estimation":
            sd = dict(zip(self.counts["class"].to_numpy().astype(str), self._accuracy_sd(), strict=True))
            return (f"{when}, the classwise accuracy is least certain for class {names} "
                    f"(posterior sd {sd[answer[0]]:.3f}).{_estimate_clause(opts.get('estimate'), self.ci_prob)}")
        prob = opts["probability"]
        if m == 1:
            verb = {"least-accurate": "is the least accurate", "most-accurate": "is the most accurate",
                    "most-miscalibrated": "is the most miscalibrated (classwise ECE)",
                    "highest-cost": "has the highest expected cost"}[target]
            return f"{when}, predicted class {names} {verb}, with posterior probability {prob:.2f}."
        group = {"least-accurate": f"the {m} least accurate predicted classes are",
                 "most-accurate": f"the {m} most accurate predicted classes are",
                 "most-miscalibrated": f"the {m} most miscalibrated predicted classes are",
                 "highest-cost": f"the {m} predicted classes with the highest expected cost are"}[target]
        return f"{when}, {group} {names}, with posterior probability {prob:.2f} that this is exactly the set."

    def _answer_label(self) -> str:
        target, m = self.options["target"], self.options["top_m"]
        what = {"least-accurate": "least accurate", "most-accurate": "most accurate",
                "most-miscalibrated": "most miscalibrated", "highest-cost": "highest cost"}[target]
        return f"P(the {what})" if m == 1 else f"P(among the {m} {what})"

    def to_json(self) -> dict[str, Any]:
        """The status object of ``pbassess session status --json``.

        Besides the session keys it carries the keys every result shares: ``metric`` (the
        target's metric: ``accuracy``, ``ece`` or ``cost``), ``inference`` (``conjugate``: exact
        draws), ``ci_prob``, ``diagnostics`` (``{"ok": true, ...}``: nothing to check for exact
        draws) and ``sentence``.
        """
        table = self.summary()
        metric = self.options.get("metric", "accuracy")
        rows = []
        for name, row in table.iterrows():
            entry = {
                "class": name, "pool": int(row["pool"]), "labeled": int(row["labeled"]), "correct": int(row["correct"]),
                "accuracy_mean": float(row["accuracy_mean"]),
                "accuracy_hdi": [float(row["accuracy_hdi_low"]), float(row["accuracy_hdi_high"])],
            }
            if metric == "accuracy":
                entry["mean"], entry["hdi"] = entry["accuracy_mean"], entry["accuracy_hdi"]
            else:
                entry["mean"] = float(row[f"{metric}_mean"])
                entry["hdi"] = [float(row[f"{metric}_hdi_low"]), float(row[f"{metric}_hdi_high"])]
            entry["p_answer"] = None if np.isnan(row["p_answer"]) else float(row["p_answer"])
            rows.append(entry)
        opts = self.options
        return to_jsonable({
            "labeled": opts["labeled"], "pool_items": int(table["pool"].sum()), "outstanding": opts["outstanding"],
            "batches_issued": opts["batches_issued"], "exhausted": opts["exhausted"],
            "target": opts["target"], "top_m": opts["top_m"], "strategy": opts["strategy"], "metric": metric,
            "answer": opts["answer"], "probability": opts["probability"], "ci_prob": self.ci_prob,
            "prior": self.prior, "sentence": self.sentence(), "classes": rows,
            "inference": "conjugate",
            "diagnostics": {"ok": True, "method": "exact conjugate draws (Beta / Dirichlet); no MCMC to check"},
        } | ({"estimate": opts.get("estimate")} if opts["target"] == "estimation" else {}))

    def plot(self, kind: str = "accuracy", ax: Any = None):
        """Draw one of the report's figures and return the Figure.

        Parameters
        ----------
        kind : {"accuracy", "answer", "labels", "metric"}
            Posterior accuracy per class with HDIs; P(being in the answer) per class (posterior
            sd for ``estimation``); labels per class against the pool size; the target's ECE or
            cost per class with HDIs.
        ax : matplotlib Axes, optional
        """
        import matplotlib.pyplot as plt

        table = self.summary()
        k = len(table)
        if ax is None:
            _, ax = plt.subplots(figsize=(min(16.0, max(6.0, 0.16 * k + 2)), 3.6 if k <= 30 else 4.4))
        fig = ax.figure
        x = np.arange(k)
        names = list(table.index)
        answer = set(self.options["answer"])
        colors = ["tab:red" if n in answer else "tab:blue" for n in names]
        pct = int(round(100 * self.ci_prob))
        if kind in ("accuracy", "metric"):
            metric = "accuracy" if kind == "accuracy" else self.options["metric"]
            if metric == "accuracy" and kind == "metric":
                raise ConfigError("the 'metric' figure exists only for the most-miscalibrated and highest-cost targets")
            mean = table[f"{metric}_mean"].to_numpy()
            low, high = table[f"{metric}_hdi_low"].to_numpy(), table[f"{metric}_hdi_high"].to_numpy()
            ax.errorbar(x, mean, yerr=[mean - low, high - mean], fmt="none", ecolor="0.6", capsize=2)
            ax.scatter(x, mean, c=colors, zorder=3, s=16)
            label = {"accuracy": "accuracy", "ece": "classwise ECE", "cost": "expected cost"}[metric]
            ax.set_ylabel(f"posterior {label}\n(mean, {pct}% HDI)")
            ax.set_title(f"{self.sentence()}", fontsize=8)
        elif kind == "answer":
            if self.options["target"] == "estimation":
                ax.bar(x, self._accuracy_sd(), color=colors)
                ax.set_ylabel("posterior sd of accuracy")
            else:
                ax.bar(x, table["p_answer"].to_numpy(), color=colors)
                ax.set_ylim(0, 1)
                ax.set_ylabel(self._answer_label())
            ax.set_title(f"{self.sentence()}", fontsize=8)
        elif kind == "labels":
            ax.bar(x, table["pool"].to_numpy(), color="0.85", label="pool")
            ax.bar(x, table["labeled"].to_numpy(), color=colors, label="labeled")
            ax.set_ylabel("items per predicted class")
            ax.set_yscale("symlog", linthresh=10)
            ax.legend(fontsize=8)
            ax.set_title(f"{self.options['labeled']} labels so far", fontsize=9)
        else:
            raise ConfigError(f"unknown figure {kind!r} (choose accuracy, answer, labels or metric)")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=90 if k > 12 else 0, fontsize=6 if k > 30 else 9)
        ax.set_xlabel("predicted class")
        fig.tight_layout()
        return fig
