"""Draw the gallery at build time: one thumbnail per figure kind, by the library's own plot functions.

Each entry is a short snippet on the built-in data (no download, conjugate posteriors, a few seconds
in all but the active-assessment entry, which runs the numba engine once). The snippet is shown
under its figure and links to the API page of the function that draws it. Output:
``docs/gallery/<name>.png`` and ``docs/gallery/index.md``, regenerated on every build and not
committed. The guides include these figures too.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

SETUP = """\
import numpy as np
import pbassess
import pbassess.plots
from pbassess.assess import (assess_accuracy, assess_calibration, assess_confusion,
                             assess_hierarchical, compare_groups)
preds = pbassess.load_data()                     # digits-logreg, built in
"""

# (name, title, API target of the drawing function, snippet; the snippet leaves the figure in `fig`)
ENTRIES = [
    ("accuracy", "Accuracy per predicted class (forest)", "pbassess.plots.plot_accuracy",
     "acc = assess_accuracy(preds, seed=0)\nfig = pbassess.plots.plot_accuracy(acc)"),
    ("rank_intervals", "Rank of each class's accuracy", "pbassess.plots.plot_rank_intervals",
     "acc = assess_accuracy(preds, seed=0)\nfig = pbassess.plots.plot_rank_intervals(acc)"),
    ("p_extreme", "P(least accurate class)", "pbassess.plots.plot_p_extreme",
     "acc = assess_accuracy(preds, seed=0)\nfig = pbassess.plots.plot_p_extreme(acc, which='lowest')"),
    ("reliability", "Bayesian reliability diagram", "pbassess.plots.plot_reliability",
     "cal = assess_calibration(preds, bins=10, seed=0)\nfig = pbassess.plots.plot_reliability(cal)"),
    ("ece", "ECE posterior", "pbassess.plots.plot_ece",
     "cal = assess_calibration(preds, bins=10, seed=0)\nfig = pbassess.plots.plot_ece(cal)"),
    ("classwise_ece", "Classwise ECE (within predicted class)", "pbassess.plots.plot_classwise_ece",
     "cal = assess_calibration(preds, bins=10, seed=0)\nfig = pbassess.plots.plot_classwise_ece(cal)"),
    ("smooth_reliability", "Smooth reliability curve", "pbassess.plots.calibration.plot_smooth_reliability",
     "from pbassess.calibration import smooth_reliability_curve\n"
     "from pbassess.plots.calibration import plot_smooth_reliability\n"
     "lab = preds.subset(preds.labeled)\n"
     "curve = smooth_reliability_curve(lab.confidence, lab.correct)\n"
     "fig = plot_smooth_reliability(curve)"),
    ("confusion", "Posterior confusion probabilities", "pbassess.plots.plot_confusion",
     "cost = assess_confusion(preds, seed=0)\nfig = pbassess.plots.plot_confusion(cost)"),
    ("expected_cost", "Expected cost per predicted class", "pbassess.plots.plot_expected_cost",
     "cost = assess_confusion(preds, seed=0)\nfig = pbassess.plots.plot_expected_cost(cost)"),
    ("comparison", "Group comparison with a ROPE", "pbassess.plots.plot_comparison",
     "shift = pbassess.load_data('digits-shift')\n"
     "lab = shift.subset(shift.labeled)\n"
     "cmp = compare_groups(lab, 'environment', groups=['clean', 'gaussian-noise-5'], rope=0.02, seed=0)\n"
     "fig = pbassess.plots.plot_comparison(cmp)"),
    ("environment_accuracy", "Accuracy per environment (hierarchical)", "pbassess.plots.plot_environment_accuracy",
     "shift = pbassess.load_data('digits-shift')\n"
     "hier = assess_hierarchical(shift, 'environment', seed=0, inference='nuts',\n"
     "                           sample_kwargs=dict(draws=300, tune=300, chains=2))\n"
     "fig = pbassess.plots.plot_environment_accuracy(hier)"),
    ("mrr", "Active assessment: MRR and labels to MRR 0.99", "pbassess.plots.active.plot_active",
     "from pbassess.active import simulate\nfrom pbassess.plots.active import plot_active\n"
     "sim = simulate(preds, 'least-accurate', ['random-item', 'ts'], 'uniform', runs=20, log_every=20, seed=0)\n"
     "fig = plot_active(sim)"),
    ("shift_boxes", "Dataset shift: ECE per intensity (Ovadia Fig. 2)", "pbassess.plots.shift.plot_shift_boxes",
     "from pbassess.shift import shift_table\nfrom pbassess.plots.shift import plot_shift_boxes\n"
     "table = shift_table(pbassess.load_data('digits-corruptions'), by=('corruption', 'intensity'), n_draws=200, seed=0)\n"
     "fig = plot_shift_boxes(table, 'ece')"),
    ("estimation", "Estimates with few labels: classical, PPI++, Bayes", "pbassess.plots.plot_estimates",
     "from pbassess.estimation import estimate\nfrom pbassess.surface import hide_labels\n"
     "shift = pbassess.load_data('digits-shift')\n"
     "few = hide_labels(shift.subset(shift.labeled), 300, seed=0)   # 300 of 5,394 labels kept\n"
     "est = estimate(few, by='environment', seed=0)\n"
     "fig = pbassess.plots.plot_estimates(est)              # or est.plot()"),
    ("surface", "Accuracy surface over two attributes", "pbassess.plots.surface.plot_surface_heatmap",
     "from pbassess.surface import fit_surface\nfrom pbassess.plots.surface import plot_surface_heatmap\n"
     "corr = pbassess.load_data('digits-corruptions')\n"
     "res = fit_surface(corr, ['corruption', 'intensity'], estimator='beta-i')\n"
     "fig = plot_surface_heatmap(res, 'corruption', 'intensity')"),
]


def _figure(value):
    """The matplotlib Figure of whatever a plot function returned (figure, axes or array of axes)."""
    import numpy as np

    if hasattr(value, "savefig"):
        return value
    if hasattr(value, "figure"):
        return value.figure
    if isinstance(value, (list, tuple, np.ndarray)):
        return _figure(np.ravel(value)[0])
    raise TypeError(f"cannot find a figure in {type(value).__name__}")


def draw(name: str, snippet: str, out_dir: Path) -> Path:
    """Run one entry's snippet and save its figure as ``<name>.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace: dict = {}
    exec(compile(SETUP + snippet, f"<gallery {name}>", "exec"), namespace)  # noqa: S102 - our own snippets
    fig = _figure(namespace["fig"])
    path = out_dir / f"{name}.png"
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close("all")
    return path


def _source_link(target: str) -> str:
    """Relative URL (from gallery/index) of the viewcode page of the function or method ``target``."""
    import importlib

    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            continue
    for attr in parts[cut:]:
        obj = getattr(obj, attr)
    module = obj.__module__
    return f"../_modules/{module.replace('.', '/')}.html#{obj.__qualname__}"


def page(entries) -> str:
    """The gallery page: a grid of linked thumbnails, then each figure with its code."""
    lines = ["# Gallery", "",
             "One figure of each kind pbassess draws, made at build time by the library's plot functions on the",
             "built-in data (`digits-logreg`, `digits-shift`, `digits-corruptions`). Click a thumbnail for the",
             "code that draws it and the function's API page.", "",
             "::::{grid} 2 3 4 4", ":gutter: 2", ""]
    for name, title, _target, _snippet in entries:
        lines += [f":::{{grid-item-card}} {title}", f":link: gallery-{name}", ":link-type: ref", "",
                  f"```{{image}} {name}.png", ":width: 100%", "```", ":::", ""]
    lines += ["::::", ""]
    for name, title, target, snippet in entries:
        lines += [f"({'gallery-' + name})=", f"## {title}", "",
                  f"Drawn by {{py:obj}}`{target}` (<a href=\"{_source_link(target)}\">its source</a>).", "",
                  f"```{{image}} {name}.png", ":width: 70%", "```", "", "```python",
                  textwrap.dedent(SETUP + snippet).rstrip(), "```", ""]
    return "\n".join(lines)


def _newest_source(docs_dir: Path) -> float:
    return max(p.stat().st_mtime for p in (docs_dir.parent / "pbassess").rglob("*.py"))


def build_gallery(docs_dir: Path) -> list[str]:
    """Draw every entry whose snippet or the library changed since its PNG was drawn; write the page."""
    import hashlib

    out = docs_dir / "gallery"
    out.mkdir(exist_ok=True)
    newest = _newest_source(docs_dir)
    for name, _title, _target, snippet in ENTRIES:
        png, stamp = out / f"{name}.png", out / f"{name}.sha"
        digest = hashlib.sha256((SETUP + snippet).encode()).hexdigest()
        fresh = png.exists() and stamp.exists() and stamp.read_text() == digest and png.stat().st_mtime > newest
        if not fresh:
            draw(name, snippet, out)
            stamp.write_text(digest)
    (out / "index.md").write_text(page(ENTRIES))
    return [e[0] for e in ENTRIES]


def _on_config_inited(app, config) -> None:
    build_gallery(Path(app.srcdir))


def setup(app):
    app.connect("config-inited", _on_config_inited)
    return {"parallel_read_safe": True, "version": "1"}
