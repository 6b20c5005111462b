"""Every notebook runs top to bottom (nbclient), and the committed one shows the outputs of that run.

The notebooks are committed with their outputs (``make notebooks`` writes them:
``docs/_ext/pbdocs_execute.py``), so a reader on GitHub sees the figures and the docs site renders
them without executing anything. Two checks keep those outputs from drifting:

- fast: every committed notebook has outputs and at least one figure, shows no error, and its
  stored hash of the code cells equals the hash of its current code (an edited notebook that was
  not re-run fails here, naming ``make notebooks``);
- slow (``make test``): each notebook is executed again, offline, on its small settings, and the
  fresh run must raise nothing and draw the same number of figures in every cell as the committed
  one.

Skipped cleanly when nbclient/nbformat/ipykernel are not installed (they are in the ``dev``
extra). Notebooks that use the public prediction sets read them from the local mirror
(``PBASSESS_DATA_DIR``) and fall back to the built-in data (or skip those parts) without it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
# The notebooks of the site, in order (docs/notebooks.md lists the same; tests/docs checks both).
NOTEBOOKS = [
    "01_quickstart.ipynb",
    "02_active_assessment.ipynb",
    "03_cost_sensitive.ipynb",
    "04_hierarchical.ipynb",
    "05_fairness.ipynb",
    "06_accuracy_surfaces.ipynb",
    "07_dataset_shift.ipynb",
    "08_estimation.ipynb",
]
TIMEOUT_SECONDS = 600


def _executor():
    spec = importlib.util.spec_from_file_location("pbdocs_execute", ROOT / "docs" / "_ext" / "pbdocs_execute.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pbdocs_execute"] = module
    spec.loader.exec_module(module)
    return module


def _committed(name):
    nbformat = pytest.importorskip("nbformat")
    path = NOTEBOOK_DIR / name
    if not path.exists():
        pytest.fail(f"{name} is listed but missing from notebooks/")
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_shows_the_outputs_of_its_current_code(name):
    execute = _executor()
    committed = _committed(name)
    problems = [p for p in execute.compare(committed, committed) if "executed now" not in p]
    assert problems == [], f"{name}: {problems}"
    source = "\n".join(cell.source for cell in committed.cells if cell.cell_type == "code")
    assert 'matplotlib.use("Agg")' not in source, "a notebook must not switch its figures off"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_matches_its_committed_outputs(name, tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    execute = _executor()
    committed = _committed(name)
    # A scratch folder keeps files the notebook writes out of the repository; the inline backend
    # records the figures (as Jupyter does) without any display, whatever MPLBACKEND the caller set.
    executed = execute.execute(NOTEBOOK_DIR / name, workdir=tmp_path, timeout=TIMEOUT_SECONDS)
    assert execute.compare(committed, executed) == [], f"{name}: committed and fresh outputs differ"


def test_the_comparison_sees_errors_missing_outputs_stale_code_and_other_figures():
    nbformat = pytest.importorskip("nbformat")
    execute = _executor()
    png = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
           "metadata": {}}

    def notebook(*outputs, code="x = 1"):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(code, outputs=[nbformat.from_dict(o) for o in outputs])]
        nb.metadata[execute.META_KEY] = {"source_sha256": execute.source_hash(nb)}
        return nb

    good = notebook(png)
    assert execute.compare(good, notebook(png)) == []
    assert any("figures per code cell" in p for p in execute.compare(good, notebook(png, png)))
    assert any("no outputs" in p for p in execute.compare(notebook(), notebook(png)))
    error = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
    assert any("raises" in p for p in execute.compare(good, notebook(png, error)))
    assert any("shows errors" in p for p in execute.compare(notebook(png, error), notebook(png)))
    stale = notebook(png)
    stale.cells[0].source = "x = 2"
    assert any("current sources" in p for p in execute.compare(stale, notebook(png)))


def test_listed_notebooks_match_the_folder():
    on_disk = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
    assert on_disk == sorted(NOTEBOOKS), "notebooks/ and NOTEBOOKS in tests/test_notebooks.py differ"
    assert NOTEBOOKS == sorted(NOTEBOOKS), "NOTEBOOKS is in the order of their numbers"
    numbers = [int(n[:2]) for n in NOTEBOOKS]
    assert numbers == list(range(1, len(NOTEBOOKS) + 1)), "notebooks are numbered 01, 02, ... without gaps"


def test_progress_bars_are_saved_in_their_last_state():
    nbformat = pytest.importorskip("nbformat")
    execute = _executor()
    chunks = ["\r  0%|", "\rts:  50%|", "\rts: 100%|", "\n", "done\n"]
    outputs = [nbformat.from_dict({"output_type": "stream", "name": "stderr", "text": t}) for t in chunks]
    outputs.append(nbformat.from_dict({"output_type": "stream", "name": "stdout", "text": "x\n"}))
    merged = execute.merge_streams(outputs)
    assert [(o["name"], o["text"]) for o in merged] == [("stderr", "ts: 100%|\ndone\n"), ("stdout", "x\n")]

