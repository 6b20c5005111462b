"""Priors compared for one assessment (issue 18): exact LOO table, sensitivity, prior checks, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import arviz as az
import numpy as np
import pytest

import pbassess as pb
from pbassess.assess.priors import parse_prior


@pytest.fixture(scope="module")
def digits():
    return pb.load_data()


def test_parse_prior_texts():
    assert parse_prior("beta(20, 2)") == ((20.0, 2.0), 2.0)
    assert parse_prior("Informed(10)") == ("informed", 10.0)
    assert parse_prior("uniform", 4.0) == ("uniform", 4.0)
    for bad, match in (("beta(0, 2)", "two positive numbers"), ("beta(a, 2)", "two numbers"),
                       ("normal(0,1)", "unknown prior")):
        with pytest.raises(pb.ConfigError, match=match):
            parse_prior(bad)


def test_the_table_is_az_compare_over_exact_loo(digits):
    cmp = pb.compare_priors(digits, priors=["uniform", "informed", "beta(20,2)"], seed=0)
    table = cmp.summary()
    assert set(table.index) == {"uniform", "informed", "beta(20,2)"}
    # the same ranking and ELPDs as az.compare over each fit's exact LOO, computed here afresh
    loos = {name: fit.loo() for name, fit in cmp.fits.items()}
    expected = az.compare(loos, round_to="none")
    assert list(table.index) == list(expected.index)
    np.testing.assert_allclose(table["elpd_loo"], expected["elpd"], rtol=1e-12)
    # ... which agree with PSIS-LOO within a standard error
    for name, fit in cmp.fits.items():
        psis = az.loo(fit.idata)
        assert abs(table.loc[name, "elpd_loo"] - psis.elpd) < psis.se
    assert (table["pareto_k_bad"] == 0).all() and cmp.options["loo"] == "exact"
    assert table["weight"].sum() == pytest.approx(1.0)
    # Beta(20, 2) (mean 0.91) is the prior nearest the digits' accuracy of 0.92: the uniform prior's
    # predictive (mean 0.5 per class) cannot have produced 92% correct
    assert table.loc["uniform", "prior_check_p"] < 0.01 < table.loc["beta(20,2)", "prior_check_p"]
    assert all(0 <= v < 1 for v in table["prior_sensitivity"])


def test_saved_and_reloaded_comparison(digits, tmp_path):
    cmp = pb.compare_priors(digits, seed=1)
    back = pb.load_result(cmp.save(tmp_path / "priors.nc"))
    assert back.sentence() == cmp.sentence() and back.to_json() == json.loads(json.dumps(cmp.to_json()))
    fig = back.plot()
    assert [ax.get_xlabel() for ax in fig.axes] == ["ELPD (leave one item out)", "accuracy of the labeled items"]
    # two priors, two error bars on the left, two 90% ranges on the right
    assert len(fig.axes[0].get_yticklabels()) == 2 and len(fig.axes[1].collections) == 4
    fig.savefig(tmp_path / "priors.png")


def test_bad_requests_are_one_line(digits):
    with pytest.raises(pb.ConfigError, match="at least two priors"):
        pb.compare_priors(digits, priors=["uniform"])
    with pytest.raises(pb.ConfigError, match="needs labeled items"):
        pb.compare_priors(digits.with_labels([None] * digits.n_items))
    with pytest.raises(pb.ConfigError, match="unknown metric"):
        pb.compare_priors(digits, metric="calibration")


def test_a_users_pymc_prior_with_nuts_is_compared_by_psis(digits):
    import pymc as pm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = pb.compare_priors(digits, priors={"uniform": "uniform", "beta(8,2)": {"accuracy": pm.Beta.dist(8, 2)}},
                                inference="nuts", seed=2, sample_kwargs={"draws": 300, "tune": 400})
    assert cmp.options["loo"] == "PSIS" and len(cmp.summary()) == 2


def test_cli_priors_on_cifar100(cifar100, shared_data_dir):
    env = {"PBASSESS_DATA_DIR": str(shared_data_dir), "MPLBACKEND": "Agg", "PATH": ""}
    cmd = [sys.executable, "-m", "pbassess.cli", "priors", "cifar100-resnet110", "--metric", "accuracy",
           "--prior", "uniform", "--prior", "informed", "--seed", "3"]
    text = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert text.returncode == 0, text.stderr
    assert "elpd_loo" in text.stdout and "prior_sensitivity" in text.stdout and "uniform" in text.stdout
    out = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [row["prior"] for row in data["priors"]] and {r["prior"] for r in data["priors"]} == {"uniform", "informed"}
    assert all(np.isfinite(row["elpd_loo"]) for row in data["priors"]) and data["seed"] == 3
    assert data["priors"][0]["elpd_diff"] == 0.0
