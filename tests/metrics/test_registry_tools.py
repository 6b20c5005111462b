"""One metric registry read by every tool (issue 18): compare, the CLI and the shift table take their
metric names from ``Metric.used_by``, and a metric registered for a tool appears there."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import pbassess as pb
from pbassess.metrics import get_metric, metric_posterior, metric_statistics, metrics_used_by
from pbassess.metrics.registry import _METRICS


def test_compare_and_shift_read_their_metric_names_from_the_registry():
    from pbassess.assess.compare import METRICS
    from pbassess.shift.result import _POSTERIOR_METRICS

    assert METRICS == tuple(m.replace("_", "-") for m in metrics_used_by("compare"))
    assert _POSTERIOR_METRICS == metrics_used_by("shift")
    for name in metrics_used_by("compare") + metrics_used_by("shift"):
        assert get_metric(name).name == name


def test_the_cli_offers_the_registry_metrics_of_compare():
    """The parser keeps a static metavar (the CLI starts without importing the registry): it must agree."""
    from pbassess.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    compare = sub.choices["compare"]
    metavar = next(a.metavar for a in compare._actions if "--metric" in a.option_strings)
    assert tuple(re.findall(r"[\w-]+", metavar)) == tuple(m.replace("_", "-") for m in metrics_used_by("compare"))


def test_a_metric_registered_for_a_tool_joins_its_list():
    accuracy = get_metric("accuracy")
    try:
        pb.metrics.register_metric(dataclasses.replace(accuracy, name="accuracy_copy", used_by=("shift",)))
        assert metrics_used_by("shift")[-1] == "accuracy_copy"
    finally:
        _METRICS.pop("accuracy_copy", None)
    with pytest.raises(pb.ConfigError, match="unknown tool 'surface'"):
        pb.metrics.register_metric(dataclasses.replace(accuracy, name="bad", used_by=("surface",)))


def test_ece_posterior_from_the_registry_matches_the_closed_form_bin_posteriors():
    """ECE draws per group from the binned-calibration family: the mean of |theta_b - s_b| weighted by n_b,
    with theta_b ~ Beta(pc s_b + k_b, pc (1 - s_b) + n_b - k_b); compared with a direct draw of that law."""
    from scipy import stats

    stats_ds = metric_statistics(pb.load_data(), "ece", bin_edges=10)
    assert stats_ds.attrs["family"] == "binned-calibration"
    draws = metric_posterior("ece", stats_ds, n_draws=20000, seed=0).to_numpy()
    n, k, s = (stats_ds[v].to_numpy().astype(float) for v in ("trials", "successes", "score_sum"))
    occ = n > 0
    mean_conf = s[occ] / n[occ]
    rng = np.random.default_rng(1)
    theta = stats.beta.rvs(2 * mean_conf + k[occ], 2 * (1 - mean_conf) + n[occ] - k[occ], size=(20000, occ.sum()),
                           random_state=rng)
    direct = (np.abs(theta - mean_conf) * n[occ] / n.sum()).sum(axis=1)
    # two independent Monte Carlo means of 20,000 draws: 5 standard errors of their difference
    se = np.sqrt(draws.var() / draws.size + direct.var() / direct.size)
    assert abs(draws.mean() - direct.mean()) < 5 * se
    assert abs(draws.std() - direct.std()) < 0.05 * direct.std()
