"""``pbassess estimate``: a metric per group from few labels and many predictions.

::

    pbassess estimate DATA [--by COLUMN] [--metric accuracy] [--method classical|wald|wilson|ppi|ppi-wald|bayes|all]
        [--labels N] [--bins B] [data, inference, seed, interval, output, strict and progress options]

DATA is a registered name or a prediction file. ``--labels N`` keeps the true labels of N
items drawn at random (seeded by ``--seed``) and hides the rest, to see what N labels buy.
``--json`` prints one object::

    {"metric": ..., "groups": [...],
     "methods": {"<name>": {"mean": [...], "ci": [[lo, hi], ...], "reason": [null or "<why no interval>", ...]}},
     "n_labeled": ..., "n_unlabeled": ..., ...}

Where a method gives no interval for a group (no labels, one labeled item, a CLT interval of labels that
are all equal) its ``ci`` is ``[null, null]`` and ``reason`` says why; the sentence says
``no interval: <reason>``. Intervals of accuracy and error lie in [0, 1].
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_BINS, DEFAULT_DRAWS, UNLABELED
from pbassess.errors import ConfigError

__all__ = ["hide_labels", "register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``estimate`` subcommand."""
    from pbassess.estimation.methods import LEGACY_METHODS, METHODS

    p = opt.add_command(
        subparsers, "estimate", fits=True, help="estimate a metric per group from few labels and many predictions",
        description="Classical, Wilson, prediction-powered (PPI++) and Bayesian (confidence-informed prior) "
                    "estimates of a mean-of-items metric per group. Active estimation (choosing which items to "
                    "label) is pbassess simulate --target estimation --strategy uncertainty, or a labeling "
                    "session (pbassess session start DATA --target estimation --strategy uncertainty).",
        examples=("pbassess estimate digits-logreg --labels 100 --seed 1 --json",
                  "pbassess estimate digits-shift --by environment --method classical,ppi --labels 300 --seed 1 "
                  "--out estimate-out"),
    )
    opt.add_data(p)
    p.add_argument("--by", default=None, metavar="COLUMN", help="'predicted' or a group column (default: whole pool)")
    p.add_argument("--metric", default="accuracy", help="accuracy, error, brier, nll or a registered per-item metric")
    p.add_argument("--method", default="all", metavar="NAME[,NAME...]",
                   help=f"{', '.join(METHODS)} or all (default: all but the Wald constructions "
                        f"{' and '.join(LEGACY_METHODS)}, which give no interval at the boundary); active "
                        "estimation is pbassess simulate --target estimation --strategy uncertainty")
    p.add_argument("--labels", type=int, default=None, metavar="N",
                   help="keep the labels of N random items and hide the rest")
    p.add_argument("--bins", type=int, default=DEFAULT_BINS, metavar="B",
                   help="confidence bins per group of the Bayesian prior")
    opt.add_inference(p, draws_default=f"{DEFAULT_DRAWS}")
    opt.add_seed(p, "the label draw and the Monte Carlo draws")
    opt.add_interval(p, "the confidence and credible intervals")
    opt.add_output(p)
    opt.add_strict(p)
    opt.add_quiet(p)
    p.set_defaults(func=run)


def hide_labels(preds, n_keep: int, seed: Any = None):
    """A copy of ``preds`` keeping the labels of ``n_keep`` random labeled items only.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b", "a", "b"], [.9, .8, .7, .6], ["a", "a", "a", "b"])
    >>> hide_labels(p, 2, seed=0).n_labeled
    2
    """
    from pbassess.stats.sampling import as_generator

    labeled = np.flatnonzero(preds.labeled)
    if not 1 <= int(n_keep) <= labeled.size:
        raise ConfigError(f"--labels must be between 1 and the {labeled.size} labeled items, got {n_keep}")
    keep = as_generator(seed).choice(labeled, size=int(n_keep), replace=False)
    labels = np.full(preds.n_items, UNLABELED, dtype=np.int64)
    labels[keep] = preds.labels[keep]
    names = np.array(preds.classes, dtype=object)
    return preds.with_labels(np.where(labels >= 0, names[np.maximum(labels, 0)], None))


def run(args: argparse.Namespace) -> int:
    """Run the estimate described by the parsed arguments."""
    from pbassess.estimation import estimate

    methods = [m.strip() for m in str(args.method).split(",")]
    if "active" in methods:
        raise ConfigError("--method active: active estimation chooses which items to label; run pbassess simulate "
                          "DATA --target estimation --strategy uncertainty, or a labeling session")
    preds = opt.load_data_args(args)
    seed = opt.seed_value(args)
    if args.labels is not None:
        preds = hide_labels(preds, args.labels, seed=seed)
    kwargs = opt.inference_kwargs(args)
    _check_estimate_memory(preds, args, methods, kwargs)
    with opt.progress(args):
        # the flag --method is the API's methods=
        result = estimate(preds, by=args.by, metric=args.metric, methods=args.method, ci_prob=opt.ci_prob_value(args),
                          bins=args.bins, seed=seed, **kwargs)

    def table() -> None:
        print(result.summary().to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        if result.prior:
            pr = result.prior
            print(f"confidence-to-accuracy prior: offset {pr['offset']:.3f}, slope {pr['slope']:.3f}, "
                  f"strength {pr['strength']:.1f} pseudo-labels")

    return opt.finish(result, args, "estimate", text=table)


def _check_estimate_memory(preds: Any, args: argparse.Namespace, methods: list[str], kwargs: dict[str, Any]) -> None:
    """Refuse in one line, before fitting, a Bayesian estimate whose draws x cells would not fit in memory."""
    from pbassess.inference import total_draws
    from pbassess.inference.memory import check_memory

    bins = int(args.bins)
    check_memory(48.0 * bins, f"--bins {bins:,}", "use a smaller --bins")  # the bin edges and their quantiles
    if "bayes" not in methods and "all" not in methods:
        return
    try:
        from pbassess.estimation.items import region_codes

        n_groups = len(region_codes(preds, args.by)[1])
    except Exception:  # noqa: BLE001 - a bad --by is reported by the estimate itself, in one line
        return
    draws = total_draws(kwargs.get("inference", "conjugate"), kwargs.get("draws"), kwargs.get("sample_kwargs"))
    cells = n_groups * min(bins, max(int(preds.n_items), 1))
    # hyperparameter draws, Beta parameters, accuracy draws and their temporaries: about six draws x cells arrays
    check_memory(48.0 * draws * cells, f"the Bayesian estimate over {n_groups:,} groups x {min(bins, preds.n_items):,} "
                 f"bins with {draws:,} draws", "use a --by with fewer groups, a smaller --bins or --draws, or "
                 "--method without bayes")


#: Options of ``pbassess simulate`` that the adaptive and the estimation paths do not use: (dest, flag, paths).
_SIMULATE_ONLY_ENGINE = (
    ("pseudocount", "--pseudocount", ("adaptive", "estimation")),
    ("batch_size", "--picks-per-round", ("adaptive", "estimation")),
    ("bins", "--bins", ("adaptive", "estimation")),
    ("cost_matrix", "--cost-matrix", ("adaptive", "estimation")),
    ("ci_prob", "--ci-prob", ("adaptive",)),
    ("out", "--out", ("adaptive", "estimation")),
    ("plot", "--plot", ("adaptive", "estimation")),
    ("top_m", "--top-m", ("estimation",)),
    ("log_every", "--log-every", ("estimation",)),
)


def _refuse_ignored(args: argparse.Namespace, estimation: bool) -> None:
    """An option given that this simulation path would ignore is an error naming it (nothing is ignored)."""
    path = "estimation" if estimation else "adaptive"
    where = "--target estimation" if estimation else "--prior adaptive"
    if estimation and args.prior is not None:
        raise ConfigError(f"--prior does not apply to --target estimation (its strategies use no prior), "
                          f"got {args.prior!r}")
    for dest, flag, paths in _SIMULATE_ONLY_ENGINE:
        if path in paths and getattr(args, dest, None) is not None:
            if dest == "batch_size":
                flag = getattr(args, "pb_alias_batch_size", flag)
            raise ConfigError(f"{flag} does not apply to {where} (it is not used there); remove it")


def run_simulation(args: argparse.Namespace) -> int:
    """``pbassess simulate`` for ``--prior adaptive`` (TS with the adaptive informed prior) and for
    ``--target estimation`` (random-item and uncertainty estimation); called by the simulate
    subcommand, whose other paths run the compiled engine.

    ``--json`` prints, for the adaptive prior, the simulate object (``target``, ``top_m``,
    ``log_every``, ``seconds``, ``compile_seconds``, ``strategies: {name: {labels_to_mrr, mrr,
    success}}``) and, for estimation, ``{"target": "estimation", "truth", "ci_prob", "strategies":
    {name: {"budget", "labels", "coverage", "width"}}}``.
    """
    import sys

    from pbassess.cli import emit_json

    estimation = args.target == "estimation"
    _refuse_ignored(args, estimation)
    names = [s.strip() for s in str(args.strategy).split(",") if s.strip()]
    if not estimation:
        bad = [n for n in names if n != "ts"]
        if bad:
            raise ConfigError(f"--prior adaptive is a prior for Thompson sampling; use --strategy ts (not {', '.join(bad)})")
    pred = opt.load_data_args(args)
    opt.seed_value(args)
    if estimation:
        from pbassess.estimation.active import simulate_estimation

        if args.budget is not None and args.budget > pred.n_items:
            raise ConfigError(f"--budget must be at most the pool size ({pred.n_items} items), got {args.budget}")
        budgets = [args.budget] if args.budget is not None else [b for b in (100, 200, 500, 1000) if b <= pred.n_items]
        if not budgets:
            raise ConfigError(f"the pool has {pred.n_items} items, fewer than the smallest default budget (100): "
                              "give --budget")
        ds = simulate_estimation(pred, budgets, strategies=names, runs=args.runs, seed=args.seed,
                                 ci_prob=opt.ci_prob_value(args))
        out = {name: {"budget": budgets, "labels": ds["labels"].sel(strategy=name).mean("run").values.tolist(),
                      "coverage": ds["coverage"].sel(strategy=name).values.tolist(),
                      "width": ds["width"].sel(strategy=name).values.tolist()} for name in names}
        if args.json:
            emit_json({"target": "estimation", "truth": ds.attrs["truth"], "ci_prob": ds.attrs["ci_prob"],
                       "strategies": out, "seed": args.seed})
        else:
            print(f"{pred.name}: accuracy {ds.attrs['truth']:.4f}; {args.runs} runs per budget")
            for name, row in out.items():
                for b, lab, cov, w in zip(row["budget"], row["labels"], row["coverage"], row["width"], strict=True):
                    print(f"{name:<12s} budget {b:>5d}  labels {lab:7.1f}  coverage {cov:.3f}  width {w:.4f}")
        return 0
    from pbassess.active.adaptive import simulate_adaptive
    from pbassess.active.evaluation import labels_to_mrr
    from pbassess.inference.memory import check_memory

    n_arms = pred.n_classes
    n_logs = -(-(args.budget or pred.n_items) // (100 if args.log_every is None else args.log_every))
    # per run: its label order (one byte per item), the Beta parameters and draws per arm, the logged curves
    check_memory(float(args.runs) * (2 * pred.n_items + 128 * n_arms + 64 * n_logs),
                 f"--prior adaptive with --runs {args.runs:,} on {pred.n_items:,} items", "use a smaller --runs")

    args.top_m = 1 if args.top_m is None else args.top_m
    args.log_every = 100 if args.log_every is None else args.log_every
    sys.stderr.write(f"pbassess simulate: {pred.name}, {pred.n_items} items; TS with the adaptive prior...\n")
    res = simulate_adaptive(pred, args.target, prior="adaptive", top_m=args.top_m, runs=args.runs,
                            log_every=args.log_every, budget=args.budget, seed=args.seed)
    labels = (np.arange(res.mrr.shape[1]) + 1) * args.log_every
    frac = labels_to_mrr(res.mrr, labels, pred.n_items)
    row = {"labels_to_mrr": frac, "mrr": res.mrr.mean(axis=0).round(6).tolist(),
           "success": res.success.mean(axis=0).round(6).tolist(),
           "agreement": res.agreement.mean(axis=0).round(6).tolist()}
    if args.json:
        emit_json({"target": args.target, "top_m": int(args.top_m), "log_every": int(args.log_every), "prior": "adaptive",
                   "seconds": res.seconds, "compile_seconds": 0.0, "strategies": {"ts": row}, "seed": args.seed})
    else:
        shown = "never" if frac != frac else f"{frac:.1%}"
        print(f"{pred.name}: {args.target}, top-{args.top_m}, TS with the adaptive prior, {args.runs} runs: "
              f"labels to MRR 0.99 {shown} ({res.seconds:.1f} s)")
    return 0
