"""Issue 8, assessment side: sizes checked before memory runs out, and fits that fail say so.

Table-driven: every reject case exits 2 with one line naming the problem (CLI) or raises a
one-line PbassessError (API); accept cases give the right numbers; nothing prints a traceback.
"""

from __future__ import annotations

import json

import numpy as np
import pymc
import pytest

import pbassess as pb
from pbassess.cli import main
from pbassess.errors import PbassessError
from pbassess.inference import mock_pymc_sample


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


CLI_REJECT = [
    (["assess", "digits-logreg", "--metric", "calibration", "--bins", "1000000"], "1,000,000 bins"),
    (["assess", "digits-logreg", "--metric", "calibration", "--bins", "1000000", "--inference", "nuts"],
     "1,000,000 bins"),
    (["assess", "digits-logreg", "--draws", "10000000000"], "--draws=10,000,000,000 is too large"),
    (["assess", "digits-logreg", "--inference", "nuts", "--draws", "10000000000"], "too large"),
    (["assess", "digits-logreg", "--seed", "-1"], "--seed must be a non-negative integer"),
    (["assess", "digits-logreg", "--seed", "abc"], "--seed must be a number"),
    (["assess", "digits-logreg", "--ci-prob", "1.5"], "--ci-prob must be in (0, 1)"),
    (["assess", "digits-logreg", "--inference", "gibbs"], "--inference must be conjugate or nuts"),
    (["assess", "digits-logreg", "--batch-size", "100"], "--batch-size applies to Parquet or Zarr"),
    (["compare", "digits-shift", "--by", "environment", "--draws", "0"], "--draws must be at least 1"),
    (["compare", "digits-shift", "--by", "environment", "--seed", "-3"], "--seed must be at least 0"),
    (["hierarchical", "digits-shift", "--by", "environment", "--inference", "conjugate"], "NUTS only"),
]


@pytest.mark.parametrize(("argv", "match"), CLI_REJECT, ids=[" ".join(a[2:]) for a, _ in CLI_REJECT])
def test_cli_rejects_in_one_line(capsys, argv, match):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and match in lines[0] and "Traceback" not in err


def _many_classes(k: int, n: int = 300, seed: int = 0) -> pb.Predictions:
    rng = np.random.default_rng(seed)
    classes = [f"c{i}" for i in range(k)]
    predicted = rng.integers(0, k, n)
    labels = np.where(rng.random(n) < 0.7, predicted, rng.integers(0, k, n))
    return pb.Predictions.from_top1([classes[i] for i in predicted], rng.uniform(0.5, 1.0, n),
                                    [classes[i] for i in labels], classes=classes)


API_REJECT = [
    ("classwise calibration, 10^4 classes, 4000 draws, 512 MiB", lambda: pb.assess_calibration(
        _many_classes(10_000), seed=0), "10,000 classes (classwise)", "512MiB"),
    ("cost with K = 10^4", lambda: pb.assess_confusion(_many_classes(10_000), seed=0),
     "the cost assessment of 10,000 classes", None),
    ("draws beyond int32", lambda: pb.assess_accuracy(pb.load_data(), draws=10**10), "too large", None),
    ("million bins", lambda: pb.assess_calibration(pb.load_data(), bins=10**6), "1,000,000 bins", None),
    ("bad sample_kwargs", lambda: pb.assess_accuracy(pb.load_data(), inference="nuts",
                                                     sample_kwargs={"draws": 10**10}), "too large", None),
]


@pytest.mark.parametrize(("what", "call", "match", "limit"), API_REJECT, ids=[c[0] for c in API_REJECT])
def test_api_rejects_in_one_line(monkeypatch, what, call, match, limit):
    if limit:
        monkeypatch.setenv("PBASSESS_MEMORY_LIMIT", limit)
    with pytest.raises(PbassessError) as info:
        call()
    message = str(info.value)
    assert match in message and "\n" not in message


def test_classwise_calibration_with_many_classes_gives_right_numbers():
    """Accept case: 10^4 classes with few draws fits (cell draws come in bounded chunks) and is exact per bin."""
    preds = _many_classes(10_000)
    res = pb.assess_calibration(preds, bins=5, draws=25, seed=0)
    c = res.counts
    a = c["prior_alpha"].to_numpy() + c["correct"].to_numpy()
    b = c["prior_beta"].to_numpy() + c["n_labeled"].to_numpy() - c["correct"].to_numpy()
    np.testing.assert_allclose(res.bin_accuracy()[0], a / (a + b))
    assert res.posterior["classwise_ece"].shape == (4, 25, 10_000)  # 4 chains of 25 draws
    # A class with no pool item has zero weight in every bin: its classwise ECE is exactly 0.
    empty = c["class_n_pool"].to_numpy() == 0
    assert empty.any() and np.all(res.draws("classwise_ece")[:, empty] == 0)


def test_chunked_classwise_draws_equal_one_chunk(monkeypatch):
    """Chunking the (draws, K, B) cell draws does not change the statistics (same seed, same numbers for small sizes)."""
    import pbassess.assess.calibration as cal

    preds = pb.load_data()
    whole = pb.assess_calibration(preds, draws=300, seed=2)
    monkeypatch.setattr(cal, "CHUNK_FLOATS", 7 * 60)  # a handful of draws per chunk
    chunked = pb.assess_calibration(preds, draws=300, seed=2)
    # Different random streams; the same posterior: means agree within Monte Carlo error (sd/sqrt(300) ~ 0.002).
    np.testing.assert_allclose(chunked.draws("classwise_ece").mean(0), whole.draws("classwise_ece").mean(0), atol=0.01)


@pytest.fixture
def mocked(monkeypatch):
    """Mocked NUTS: prior draws, 20 per chain -- a fit that fails its ESS check."""
    monkeypatch.setattr(pymc, "sample", mock_pymc_sample)


@pytest.mark.filterwarnings("ignore:MCMC diagnostics failed:UserWarning")
def test_failing_fit_says_so_and_strict_exits_non_zero(capsys, mocked):
    argv = ["assess", "digits-logreg", "--inference", "nuts", "--draws", "20", "--json"]
    code, out, err = _run(capsys, *argv)
    payload = json.loads(out)
    assert code == 0 and payload["diagnostics"]["ok"] is False
    assert "Warning: the MCMC fit failed its diagnostics" in payload["sentence"]
    assert "warning: the NUTS fit failed its diagnostics" in err and "Traceback" not in err
    code, out, err = _run(capsys, *argv, "--strict")
    assert code == 3 and json.loads(out)["diagnostics"]["ok"] is False


@pytest.mark.filterwarnings("ignore:MCMC diagnostics failed:UserWarning")
@pytest.mark.filterwarnings("ignore:R-hat skipped:UserWarning")
def test_one_chain_fit_notes_the_skipped_rhat(mocked):
    res = pb.assess_accuracy(pb.load_data(), inference="nuts", seed=0, sample_kwargs={"draws": 30, "chains": 1})
    assert res.diagnostics["max_rhat"] is None and "R-hat skipped" in res.diagnostics["rhat_note"]
    assert res.to_json()["diagnostics"]["rhat_note"] == res.diagnostics["rhat_note"]


@pytest.mark.filterwarnings("ignore:MCMC diagnostics failed:UserWarning")
def test_failing_fit_in_summary_and_sentences_of_every_metric(mocked):
    preds = pb.load_data()
    for fit in (pb.assess_accuracy(preds, inference="nuts", seed=0, sample_kwargs={"draws": 20, "chains": 2}),
                pb.assess_confusion(preds, inference="nuts", seed=0, sample_kwargs={"draws": 20, "chains": 2}),
                pb.compare_groups(pb.load_data("digits-shift"), "environment", inference="nuts", draws=20, seed=0)):
        assert not fit.diagnostics_ok
        assert "failed its diagnostics" in fit.sentence()
        assert "failed its diagnostics" in fit.summary().attrs["warning"]
        assert fit.to_json()["diagnostics"]["ok"] is False


@pytest.mark.parametrize("command", ["assess", "compare", "hierarchical", "demo"])
def test_help_has_no_raw_markup_and_documents_every_option(command):
    from pbassess.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    text = sub.format_help()
    assert "``" not in text and ":func:" not in text and ":mod:" not in text and "`" not in text
    undocumented = [a.option_strings for a in sub._actions if a.option_strings and not a.help]
    assert undocumented == []
    if command != "demo":
        assert {"--seed", "--ci-prob", "--json", "--strict", "--out"} <= set(sub._option_string_actions)
    if command in ("assess", "compare"):
        assert {"--inference", "--engine"} <= set(sub._option_string_actions)
    if command == "assess":
        assert {"--cost-matrix", "--cost", "--batch-size"} <= set(sub._option_string_actions)
