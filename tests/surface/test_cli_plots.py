"""``pbassess surface`` / ``surface-explore`` and the surface figures."""

import json

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from pbassess.cli import main  # noqa: E402
from pbassess.errors import ConfigError  # noqa: E402
from pbassess.plots.surface import plot_mse_curves, plot_surface_heatmap, plot_worst_arms  # noqa: E402
from pbassess.surface import ArmCounts, fit_surface  # noqa: E402
from pbassess.surface.synthetic import synthetic_surface  # noqa: E402


@pytest.fixture()
def pool_file(tmp_path):
    syn = synthetic_surface(800, 3, seed=0)
    p = syn.preds
    path = tmp_path / "pool.csv"
    import pandas as pd

    frame = pd.DataFrame({"item_id": p.item_ids, "label": p.labels, "predicted": p.predicted,
                          "confidence": p.confidence, **{a: p.groups[a] for a in syn.attributes}})
    frame.to_csv(path, index=False)
    return path


def test_surface_json_contract(pool_file, capsys):
    code = main(["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "beta-i",
                 "--subsample-labels", "100", "--seed", "3", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["attributes"] == ["a0", "a1"] and len(out["arms"]) == 4
    assert sum(out["n"]) == 100 and sum(out["pool_n"]) == 800
    for lo_hi, m in zip(out["hdi"], out["mean"], strict=False):
        assert lo_hi[0] <= m <= lo_hi[1]
    assert set(out) >= {"mean", "var", "diagnostics", "inference"}


def test_surface_subsample_beyond_the_labels_says_so(pool_file, capsys):
    """More labels asked than the pool has: all are kept, and a note says so (not silently)."""
    code = main(["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "beta-i",
                 "--subsample-labels", "5000", "--seed", "3", "--json"])
    captured = capsys.readouterr()
    assert code == 0
    assert sum(json.loads(captured.out)["n"]) == 800
    assert "note: --subsample-labels 5,000 is more than the 800 labeled items, so all of them are kept" in captured.err


def test_cli_warnings_are_one_line_without_source_paths(pool_file, capsys, monkeypatch):
    """A warning raised while a command runs is shown as ``pbassess COMMAND: warning: MESSAGE``, one line,
    not Python's ``file.py:LINE: UserWarning`` with the source line."""
    import warnings

    import pbassess.surface as surface_api

    real = surface_api.hide_labels

    def hide_with_warning(preds, keep, seed=None):
        warnings.warn("something the user should know,\n  over two lines", UserWarning, stacklevel=2)
        return real(preds, keep, seed=seed)

    monkeypatch.setattr(surface_api, "hide_labels", hide_with_warning)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        code = main(["surface", str(pool_file), "--attributes", "a0", "--estimator", "beta-i",
                     "--subsample-labels", "100", "--seed", "3", "--json"])
    err = capsys.readouterr().err
    assert code == 0
    assert err.splitlines() == ["pbassess surface: warning: something the user should know, over two lines"]
    assert warnings.showwarning is warnings._showwarning_orig  # restored after the command


def test_surface_bad_input_exits_2(pool_file, capsys):
    assert main(["surface", str(pool_file), "--attributes", "nope", "--estimator", "beta-i"]) == 2
    assert "attribute column 'nope' not found" in capsys.readouterr().err
    assert main(["surface", str(pool_file), "--attributes", "a0", "--estimator", "additive",
                 "--inference", "conjugate"]) == 2


def test_too_few_draws_for_the_stack_say_what_to_change(pool_file, capsys):
    """The default stack needs PSIS-LOO, which needs 25 draws: fewer give one line naming the remedies."""
    code = main(["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "additive", "--covariate",
                 "confidence", "--subsample-labels", "150", "--draws", "20", "--chains", "1", "--seed", "3"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert ("error: stacking with the confidence: PSIS-LOO needs at least 5 draws in the Pareto tail (25 draws in "
            "all); 20 draws give 4 (take more draws, or do not stack: stack_confidence=False, --no-stack-confidence)"
            in err)


def test_surface_stack_confidence_flag(pool_file, capsys):
    """--stack-confidence: the stacking diagnostics in --json and the sentence; refused in one line off the
    anchored surface."""
    assert main(["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "beta-i",
                 "--stack-confidence"]) == 2
    assert "applies to the confidence-anchored surface" in capsys.readouterr().err
    code = main(["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "additive", "--covariate",
                 "confidence", "--stack-confidence", "--subsample-labels", "150", "--draws", "200", "--seed", "3",
                 "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    diag = out["diagnostics"]
    assert 0.0 <= diag["confidence_weight"] <= 1.0 and diag["stacking_items"] == 150
    assert np.isfinite(diag["elpd_diff_vs_confidence"]) and diag["elpd_diff_vs_confidence_se"] >= 0
    for lo, m, hi in zip(out["hdi_low"], out["mean"], out["hdi_high"], strict=True):
        assert lo <= m + 1e-12 and m <= hi + 1e-12


def test_anchored_option_flags_reach_the_fit(pool_file, capsys, monkeypatch):
    """--coding, --residual-scales, --min-elpd-gain and --confidence-combination become fit_surface's model
    options, bound and combination
    (plumbing: the fit is replaced; the options' effect on the model is tested with the model)."""
    import pbassess.surface as surface_api

    seen = {}

    def record(preds, attributes, **kwargs):
        seen.update(kwargs)
        raise ConfigError("recorded")

    monkeypatch.setattr(surface_api, "fit_surface", record)
    base = ["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "additive", "--covariate", "confidence"]
    assert main([*base, "--coding", "indicator", "--residual-scales", "0.1,0.05", "--stack-confidence",
                 "--min-elpd-gain=-inf"]) == 2
    assert seen["model_options"] == {"coding": "indicator", "main_scale": 0.1, "interaction_scale": 0.05}
    assert seen["min_elpd_gain"] == float("-inf") and seen["stack_confidence"] is True
    seen.clear()
    assert main([*base, "--stack-confidence"]) == 2
    assert seen["model_options"] is None and "min_elpd_gain" not in seen  # fit_surface's own default (4)
    seen.clear()
    assert main(base) == 2 and seen["stack_confidence"] is None  # fit_surface's default: stacked on a pool
    assert main([*base, "--min-elpd-gain", "2"]) == 2 and seen["min_elpd_gain"] == 2.0
    assert main([*base, "--no-stack-confidence"]) == 2 and seen["stack_confidence"] is False
    assert main(base) == 2 and seen["widen_scales"] is None  # fit_surface's default: widened where it applies
    assert main([*base, "--widen-scales"]) == 2 and seen["widen_scales"] is True
    assert main([*base, "--no-widen-scales"]) == 2 and seen["widen_scales"] is False
    seen.clear()
    assert main(base) == 2 and "confidence_combination" not in seen  # fit_surface's default: select
    assert main([*base, "--confidence-combination", "stack"]) == 2 and seen["confidence_combination"] == "stack"
    capsys.readouterr()
    for flags, message in ((["--min-elpd-gain", "2", "--no-stack-confidence"],
                            "--min-elpd-gain applies where the anchored surface is stacked"),
                           (["--residual-scales", "0.1"], "--residual-scales takes two numbers"),
                           (["--residual-scales", "0.1,-1"], "--residual-scales"),
                           (["--min-elpd-gain", "nan", "--stack-confidence"], "--min-elpd-gain must be finite"),
                           (["--confidence-combination", "stack", "--no-stack-confidence"],
                            "--confidence-combination applies where the anchored surface is stacked"),
                           (["--widen-scales", "--no-stack-confidence"],
                            "--widen-scales applies where the anchored surface is stacked"),
                           (["--widen-scales", "--coding", "indicator"], "--coding sets that prior already"),
                           (["--widen-scales", "--residual-scales", "0.1,0.05"],
                            "--residual-scales sets that prior already")):
        assert main([*base, *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    assert main([*base, "--confidence-combination", "mix"]) == 2  # argparse: its usage, then the one error line
    assert "--confidence-combination: invalid choice: 'mix'" in capsys.readouterr().err.strip().splitlines()[-1]
    beta = ["surface", str(pool_file), "--attributes", "a0,a1", "--estimator", "beta-i"]
    assert main([*beta, "--coding", "indicator"]) == 2
    assert "--coding applies to the confidence-anchored surface" in capsys.readouterr().err
    assert main([*beta, "--widen-scales"]) == 2
    assert "--widen-scales applies where the anchored surface is stacked" in capsys.readouterr().err


@pytest.mark.parametrize("strategy", ["variance", "variance-reduction", "design"])
def test_surface_explore_json(pool_file, capsys, strategy):
    code = main(["surface-explore", str(pool_file), "--attributes", "a0,a1,a2", "--estimator", "beta-i",
                 "--budget", "60", "--batch-size", "20", "--seeds", "2", "--strategy", strategy, "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_labels"] == [20.0, 40.0, 60.0]
    assert len(out["macro_mse"]["mean"]) == 3 and all(s >= 0 for s in out["macro_mse"]["sd"])


def _result():
    arms = ArmCounts.from_arrays([10, 10, 10, 4], [9, 5, 8, 1], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
                                 attributes=("sex", "dis"), pool_n=[100, 300, 50, 10])
    return fit_surface(arms, estimator="beta-i")


def test_heatmap_draws_the_marginal_table():
    r = _result()
    fig = plot_surface_heatmap(r, "sex", "dis")
    ax = fig.axes[0]
    image = ax.images[0].get_array()
    assert image.shape == (2, 2)
    assert np.allclose(image, r.marginal("sex", "dis").values)
    assert [t.get_text() for t in ax.texts] == [f"{v:.2f}" for v in r.marginal("sex", "dis").values.ravel()]
    assert ax.get_ylabel() == "sex" and ax.get_xlabel() == "dis"


def test_worst_arms_forest_and_mse_curves():
    r = _result()
    ax = plot_worst_arms(r, 2).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["sex=1, dis=1 (n=4)", "sex=0, dis=1 (n=10)"]
    assert np.allclose(sorted(ax.lines[0].get_xdata()), np.sort(r.mean)[:2])
    import xarray as xr

    ds = xr.Dataset({"macro_mse": (("seed", "round"), [[0.1, 0.05], [0.2, 0.07]]),
                     "n_labels": (("seed", "round"), [[10, 20], [10, 20]])})
    ax = plot_mse_curves({"random": ds, "variance": ds * 0.5}).axes[0]
    assert len(ax.lines) == 2 and np.allclose(ax.lines[0].get_ydata(), [0.15, 0.06])


def _band_edges(collection) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edge of a fill_between polygon over two x values."""
    y = collection.get_paths()[0].vertices[:, 1]
    return np.array([y[1], y[2]]), np.array([y[-2], y[-3]])


@pytest.mark.parametrize("band", ["range", "quantiles", "se"])
def test_mse_curve_bands_are_what_they_say(band):
    import xarray as xr

    values = np.array([[0.10, 0.05], [0.20, 0.07], [0.30, 0.06], [0.40, 0.08]])
    ds = xr.Dataset({"macro_mse": (("seed", "round"), values), "n_labels": (("seed", "round"), [[10, 20]] * 4)})
    ax = plot_mse_curves({"m": ds}, band=band, log=False).axes[0]
    lo, hi = _band_edges(ax.collections[0])
    expected = {"range": (values.min(0), values.max(0)),
                "quantiles": (np.quantile(values, 0.1, axis=0), np.quantile(values, 0.9, axis=0)),
                "se": (values.mean(0) - 2 * values.std(0, ddof=1) / 2, values.mean(0) + 2 * values.std(0, ddof=1) / 2)}
    np.testing.assert_allclose(np.sort([lo, hi], axis=0), np.sort(expected[band], axis=0), rtol=1e-12)
    with pytest.raises(ConfigError, match="unknown band"):
        plot_mse_curves({"m": ds}, band="sd")
