"""Damaged Parquet folders and Zarr stores through the real CLI (issue 23): a clear error or the right answer.

Each case makes a damaged copy, in ``tmp_path``, of a small pool built from the digits data
(899 items, 10 classes, an attribute ``A`` holding the texts ``'01'``, ``'1'`` and ``'1.0'``):
a Parquet folder of three parts (row groups of 100 rows) or a Zarr store written by
:func:`pbassess.data.lazy.write_zarr` (chunks of 100 rows). Every command that reads ``DATA``
runs on it in-process (``pbassess.cli.main``), and each run is one of:

* *clear error*: exit 2, exactly one stderr line, matching the case's pattern (which names the
  file, chunk or array at fault);
* *right answer*: exit 0 and the same numbers as the intact pool read eagerly from CSV;
* *traceback*: an exception escaped ``main`` or a multi-line / unmatched error;
* *silent wrong answer*: exit 0 with numbers that differ from the intact pool's.

Only the first two may occur. ``pytest -s tests/robustness/test_lazy_sources_campaign.py`` prints
the counts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pbassess.cli import main

PARTS = 3
ROWS = 300  # rows per part (the last part holds 299)
OUTCOMES: list[tuple[str, str, str, str]] = []  # (case, command, outcome, detail)


# ----------------------------------------------------------------------------- the intact pool
@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict[str, Path]:
    import pbassess as pb
    from pbassess.data.lazy import write_zarr

    p = pb.load_data("digits-logreg")
    ds = p.dataset
    n = p.n_items
    frame = pd.DataFrame({"item_id": ds["item_id"].values.astype(str), "label": p.labels,
                          **{f"p_{c}": ds["probs"].values[:, j] for j, c in enumerate(p.classes)},
                          "A": np.array(["01", "1", "1.0"])[np.arange(n) % 3]})
    root = tmp_path_factory.mktemp("base")
    csv = root / "pool.csv"
    frame.to_csv(csv, index=False)
    folder = root / "pool"
    folder.mkdir()
    for i in range(PARTS):
        part = pa.Table.from_pandas(frame.iloc[i * ROWS:(i + 1) * ROWS], preserve_index=False)
        pq.write_table(part, folder / f"part-{i}.parquet", row_group_size=100)
    store = write_zarr(pb.read_predictions(csv), root / "pool.zarr", rows_per_chunk=100)
    return {"csv": csv, "parquet": folder, "zarr": store, "frame": frame}


def _copy(base: dict, kind: str, tmp: Path) -> Path:
    target = tmp / ("pool.zarr" if kind == "zarr" else "pool")
    shutil.copytree(base[kind], target)
    return target


def _part(frame: pd.DataFrame, i: int) -> pd.DataFrame:
    return frame.iloc[i * ROWS:(i + 1) * ROWS]


def _truncate(file: Path, keep: float = 0.5) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: int(len(data) * keep)])


def _garble(file: Path, start: int, stop: int) -> None:
    data = bytearray(file.read_bytes())
    stop = min(stop, len(data))
    data[start:stop] = np.random.default_rng(0).integers(0, 256, stop - start, dtype=np.uint8).tobytes()
    file.write_bytes(bytes(data))


# ----------------------------------------------------------------------------- damage: Parquet folders
def p_intact(d, folder):
    pass


def p_hidden_checkpoints(d, folder):
    (folder / ".ipynb_checkpoints").mkdir()
    shutil.copy(folder / "part-0.parquet", folder / ".ipynb_checkpoints" / "part-0-checkpoint.parquet")
    shutil.copy(folder / "part-1.parquet", folder / ".ipynb_checkpoints" / "part-1-checkpoint.parquet")


def p_dotfile_part(d, folder):
    shutil.copy(folder / "part-2.parquet", folder / ".part-2.parquet")
    shutil.copy(folder / "part-0.parquet", folder / "_tmp-part-0.parquet")


def p_other_files(d, folder):
    (folder / "README.txt").write_text("not data\n")
    (folder / "_SUCCESS").write_text("")


def p_reordered_columns(d, folder):
    part = _part(d["frame"], 1)
    part[list(part.columns)[::-1]].to_parquet(folder / "part-1.parquet", index=False)


def p_empty_part(d, folder):
    d["frame"].iloc[:0].to_parquet(folder / "part-3.parquet", index=False)


def p_subfolder_parts(d, folder):
    (folder / "year=2024").mkdir()
    shutil.move(folder / "part-2.parquet", folder / "year=2024" / "part-2.parquet")


def p_duplicate_ids_across_parts(d, folder):
    d["frame"].iloc[250:260].to_parquet(folder / "part-3.parquet", index=False)


def p_duplicate_ids_within_part(d, folder):
    part = _part(d["frame"], 1).copy()
    part.iloc[5, 0] = part.iloc[4, 0]
    part.to_parquet(folder / "part-1.parquet", index=False)


def p_truncated_first_part(d, folder):
    _truncate(folder / "part-0.parquet")


def p_truncated_middle_part(d, folder):
    _truncate(folder / "part-1.parquet", 0.8)


def p_corrupted_pages(d, folder):
    _garble(folder / "part-1.parquet", 100, 4000)


def p_corrupted_footer(d, folder):
    file = folder / "part-0.parquet"
    size = file.stat().st_size
    _garble(file, size - 400, size - 8)  # the footer, keeping its length and the magic bytes


def p_zero_byte_part(d, folder):
    (folder / "part-1.parquet").write_bytes(b"")


def p_not_parquet(d, folder):
    (folder / "part-9.parquet").write_text("item_id,label\n1,2\n")


def p_missing_column(d, folder):
    _part(d["frame"], 2).drop(columns=["p_3"]).to_parquet(folder / "part-2.parquet", index=False)


def p_extra_column(d, folder):
    _part(d["frame"], 2).assign(B=1).to_parquet(folder / "part-2.parquet", index=False)


def p_text_probability(d, folder):
    _part(d["frame"], 1).astype({"p_3": str}).to_parquet(folder / "part-1.parquet", index=False)


def p_text_labels(d, folder):
    _part(d["frame"], 1).astype({"label": str}).to_parquet(folder / "part-1.parquet", index=False)


def p_numeric_attribute_in_one_part(d, folder):
    _part(d["frame"], 2).assign(A=1.0).to_parquet(folder / "part-2.parquet", index=False)


# ----------------------------------------------------------------------------- damage: Zarr stores
def _remove(array: str, key: str = "3"):
    def damage(d, store):
        (store / array / "c" / key).unlink()
    damage.__name__ = f"z_missing_{array}_chunk"
    return damage


def z_intact(d, store):
    pass


def z_hidden_files(d, store):
    (store / ".DS_Store").write_bytes(b"\x00\x01")
    (store / ".ipynb_checkpoints").mkdir()


def z_truncated_label_chunk(d, store):
    _truncate(store / "label" / "c" / "3")


def z_truncated_probs_chunk(d, store):
    _truncate(store / "probs" / "c" / "5" / "0")


def z_zero_byte_predicted_chunk(d, store):
    (store / "predicted" / "c" / "0").write_bytes(b"")


def z_garbage_confidence_chunk(d, store):
    _garble(store / "confidence" / "c" / "8", 0, 10_000)


def z_garbage_attribute_chunk(d, store):
    _garble(store / "A" / "c" / "2", 0, 10_000)


def z_label_array_too_short(d, store):
    import zarr

    label = zarr.open_array(store / "label", mode="r")[:]
    shutil.rmtree(store / "label")
    arr = zarr.create_array(store / "label", shape=(850,), chunks=(100,), dtype="int64", dimension_names=("item",),
                            fill_value=0)
    arr[:] = label[:850]


def z_corrupt_array_metadata(d, store):
    (store / "predicted" / "zarr.json").write_text("{ not json")


def z_array_metadata_missing(d, store):
    (store / "label" / "zarr.json").unlink()


def z_duplicate_ids(d, store):
    import zarr

    ids = zarr.open_array(store / "item_id", mode="r+")
    ids[450] = ids[40]


def z_not_a_store(d, store):
    shutil.rmtree(store)
    store.mkdir()
    (store / "zarr.json").write_text("[1, 2")


# ----------------------------------------------------------------------------- the cases
CLEAR, RIGHT = "clear error", "right answer"
CASES = [
    # (damage, source kind, expected: None = the intact pool's answer, else a pattern of the one error line, or
    #  {command: pattern} where the commands not named give the intact pool's answer)
    (p_intact, "parquet", None),
    (p_hidden_checkpoints, "parquet", None),
    (p_dotfile_part, "parquet", None),
    (p_other_files, "parquet", None),
    (p_reordered_columns, "parquet", None),
    (p_empty_part, "parquet", None),
    (p_subfolder_parts, "parquet", None),
    (p_numeric_attribute_in_one_part, "parquet", r"part-2\.parquet: column 'A' holds numbers \(double\), but text \(\w+\) in \S+part-0\.parquet"),
    (p_duplicate_ids_across_parts, "parquet",
     r"item ids must be unique: 'digit-0\d+' appears 2 times \(in \S+part-0\.parquet and \S+part-3\.parquet\)"),
    (p_duplicate_ids_within_part, "parquet", r"item ids must be unique: 'digit-\d+' appears 2 times \(in \S+part-1"),
    (p_truncated_first_part, "parquet", r"part-0\.parquet: not a readable Parquet file"),
    (p_truncated_middle_part, "parquet", r"part-1\.parquet: not a readable Parquet file"),
    (p_corrupted_pages, "parquet", r"part-1\.parquet: (cannot read row groups|not a readable Parquet file)"),
    (p_corrupted_footer, "parquet", r"part-0\.parquet: not a readable Parquet file"),
    (p_zero_byte_part, "parquet", r"part-1\.parquet: not a readable Parquet file \(the file is empty \(0 bytes\)\)"),
    (p_not_parquet, "parquet", r"part-9\.parquet: not a readable Parquet file"),
    (p_missing_column, "parquet", r"part-2\.parquet: its columns differ from those of \S+part-0\.parquet \(lacks 'p_3'\)"),
    (p_extra_column, "parquet", r"part-2\.parquet: its columns differ .* \(has 'B' too\)"),
    (p_text_probability, "parquet", r"part-1\.parquet: column 'p_3' holds text \(\w+\), but numbers \(double\)"),
    (p_text_labels, "parquet", r"part-1\.parquet: column 'label' holds text \(\w+\), but numbers \(int64\)"),
    (z_intact, "zarr", None),
    (z_hidden_files, "zarr", None),
    *[(_remove(a, k), "zarr", rf"{a}/c/{k.replace('/', '/')}: chunk \(\d+(, 0)?,?\) of array '{a}' is missing")
      for a, k in (("label", "3"), ("predicted", "3"), ("probs", "4/0"), ("confidence", "0"), ("item_id", "8"),
                   ("A", "5"))],
    (z_truncated_label_chunk, "zarr", r"label/c/3: chunk \(3,\) of array 'label' cannot be read"),
    (z_truncated_probs_chunk, "zarr", r"probs/c/5/0: chunk \(5, 0\) of array 'probs' cannot be read"),
    (z_zero_byte_predicted_chunk, "zarr", r"predicted/c/0: chunk \(0,\) of array 'predicted' cannot be read"),
    (z_garbage_confidence_chunk, "zarr", r"confidence/c/8: chunk \(8,\) of array 'confidence' cannot be read"),
    # assess and recalibrate never read A: their answers are right; the commands grouping by A refuse it
    (z_garbage_attribute_chunk, "zarr", {"estimate": r"A/c/2: chunk \(2,\) of array 'A' cannot be read",
                                         "surface": r"A/c/2: chunk \(2,\) of array 'A' cannot be read"}),
    (z_label_array_too_short, "zarr", r"pool\.zarr: the arrays disagree on the number of items \(.*label has 850"),
    (z_corrupt_array_metadata, "zarr", r"pool\.zarr/predicted/zarr\.json: the metadata of the Zarr store is damaged"),
    (z_array_metadata_missing, "zarr", r"pool\.zarr/label: a folder of the store without array metadata"),
    (z_duplicate_ids, "zarr", r"item ids must be unique: 'digit-\d+' appears 2 times \(in \S+item_id/c/0 and \S+item_id/c/4\)"),
    (z_not_a_store, "zarr", r"pool\.zarr/zarr\.json: the metadata of the Zarr store is damaged"),
]

COMMANDS = {
    "assess": ["assess", "{data}", "--json", "--seed", "1"],
    "estimate": ["estimate", "{data}", "--by", "A", "--labels", "100", "--method", "classical", "--json", "--seed", "1"],
    "surface": ["surface", "{data}", "--attributes", "A", "--json", "--seed", "1", "--quiet"],
    "recalibrate": ["recalibrate", "{data}", "--method", "histogram", "--json", "--seed", "1", "--draws", "200"],
}


def _numbers(command: str, out: str):
    """The numbers of an answer that must not change with the way the pool is stored."""
    result = json.loads(out)
    if command == "assess":
        return result["classes"], result["n"], result["correct"]
    if command == "estimate":
        return result["groups"], result["n_labeled_per_group"], np.round(result["methods"]["classical"]["mean"], 12).tolist()
    if command == "surface":
        return result["arms"], result["n"], result["pool_n"], np.round(result["mean"], 12).tolist()
    if command == "recalibrate":
        return {k: round(v, 12) for k, v in result["before"].items()}
    if command == "shift":
        return [(r["level"], r["n"], round(r["accuracy"], 12)) for r in result]
    raise AssertionError(command)


def _run(command: str, data: Path, out: Path, capsys) -> tuple[int | None, str, str]:
    """Exit status, stdout and stderr of one command; warnings count as stderr lines (as in a shell)."""
    import warnings

    argv = [a.format(data=data) for a in COMMANDS[command]] + ["--out", str(out)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = main(argv)
        except BaseException as exc:  # noqa: BLE001 - a traceback is the outcome being measured
            captured = capsys.readouterr()
            return None, captured.out, f"{type(exc).__name__}: {exc}"
    captured = capsys.readouterr()
    shown = "".join(f"{w.category.__name__}: {w.message}\n" for w in caught
                    if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning)))
    return code, captured.out, shown + captured.err


def _outcome(code, out, err, pattern, expected, command) -> tuple[str, str]:
    lines = [line for line in err.strip().splitlines() if not line.startswith(f"pbassess {command}: note:")]
    if code is None or "Traceback" in err:
        return "traceback", err.strip().splitlines()[-1] if err.strip() else "?"
    if code == 0:
        if pattern is not None:
            return "silent wrong answer", f"exit 0, expected an error matching {pattern!r}"
        got = _numbers(command, out)
        return (RIGHT, "") if got == expected else ("silent wrong answer", f"{got!r} != {expected!r}")
    if code == 2 and len(lines) == 1 and pattern is not None and re.search(pattern, lines[0]):
        return CLEAR, lines[0]
    if code == 2 and len(lines) == 1:
        return "unclear error", lines[0]
    return "traceback", f"exit {code}: {err.strip()[-300:]}"


@pytest.fixture(scope="module")
def reference(base, tmp_path_factory) -> dict[str, object]:
    """Each command's numbers on the intact pool, read eagerly from CSV."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("ref")
    expected = {}
    for command in COMMANDS:
        argv = [a.format(data=base["csv"]) for a in COMMANDS[command]] + ["--out", str(out / command)]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(argv)
        assert code == 0, stderr.getvalue()
        expected[command] = _numbers(command, stdout.getvalue())
    return expected


@pytest.mark.parametrize(("damage", "kind", "pattern"), CASES, ids=[c[0].__name__ for c in CASES])
def test_damaged_source_gives_a_clear_error_or_the_right_answer(damage, kind, pattern, base, reference, tmp_path,
                                                                capsys):
    data = _copy(base, kind, tmp_path)
    damage(base, data)
    problems = []
    for command in COMMANDS:
        code, out, err = _run(command, data, tmp_path / f"out-{command}", capsys)
        expected = pattern.get(command) if isinstance(pattern, dict) else pattern
        outcome, detail = _outcome(code, out, err, expected, reference.get(command), command)
        OUTCOMES.append((damage.__name__, command, outcome, detail))
        if outcome not in (CLEAR, RIGHT):
            problems.append(f"{command}: {outcome}: {detail}")
    assert not problems, "; ".join(problems)


# ----------------------------------------------------------------------------- attribute identity
def test_attribute_texts_keep_their_identity_in_csv(base, reference, tmp_path, capsys):
    """'01', '1' and '1.0' are three groups from CSV as from Parquet (estimate, surface, shift)."""
    for command in ("estimate", "surface"):
        code, out, err = _run(command, base["csv"], tmp_path / command, capsys)
        outcome, detail = _outcome(code, out, err, None, reference[command], command)
        OUTCOMES.append(("csv_attribute_identity", command, outcome, detail))
        assert outcome == RIGHT, detail
        groups = json.loads(out)["groups" if command == "estimate" else "arms"]
        assert [g if isinstance(g, str) else g[0] for g in groups] == ["01", "1", "1.0"]
    COMMANDS.setdefault("shift", ["shift", "{data}", "--by", "A", "--json", "--seed", "1"])
    try:
        code, out, err = _run("shift", base["csv"], tmp_path / "shift", capsys)
    finally:
        COMMANDS.pop("shift")
    assert code == 0, err
    levels = _numbers("shift", out)
    frame = base["frame"]
    expected = [(level, int((frame["A"] == level).sum())) for level in ("01", "1", "1.0")]
    assert [(lv, n) for lv, n, _ in levels] == expected
    OUTCOMES.append(("csv_attribute_identity", "shift", RIGHT, ""))


def test_a_numeric_attribute_stays_numeric(tmp_path):
    from pbassess import read_predictions

    path = tmp_path / "n.csv"
    path.write_text("item_id,label,p_a,p_b,age,score,code\n1,a,0.9,0.1,31,0.5,01\n2,b,0.2,0.8,45,,1\n"
                    "3,a,0.6,0.4,52,2,1.0\n")
    groups = read_predictions(path).groups
    assert groups["age"].tolist() == [31, 45, 52] and groups["age"].dtype.kind == "i"
    assert groups["score"].dtype.kind == "f" and np.isnan(groups["score"][1])
    assert groups["code"].tolist() == ["01", "1", "1.0"]


# ----------------------------------------------------------------------------- the counts
def test_zz_campaign_counts():
    """Print the counts (run with -s); no traceback, unclear error or silent wrong answer."""
    if not OUTCOMES:
        pytest.skip("the campaign cases did not run")
    counts = Counter(outcome for *_, outcome, _ in OUTCOMES)
    cases = len({case for case, *_ in OUTCOMES})
    print(f"\nlazy-source campaign: {cases} cases, {len(OUTCOMES)} runs: {counts[CLEAR]} clear errors, "
          f"{counts[RIGHT]} right answers, {counts['traceback']} tracebacks, {counts['silent wrong answer']} silent "
          f"wrong answers, {counts['unclear error']} unclear errors")
    if os.environ.get("PBASSESS_CAMPAIGN_VERBOSE"):
        for case, command, outcome, detail in OUTCOMES:
            print(f"  {case:36s} {command:12s} {outcome:20s} {detail[:140]}")
    assert counts["traceback"] == counts["silent wrong answer"] == counts["unclear error"] == 0
