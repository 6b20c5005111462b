"""Execute every notebook in ``notebooks/`` top to bottom (nbclient), offline, on its small settings.

Marked slow; skipped cleanly when nbclient/nbformat/ipykernel are not installed (they are in the
``dev`` extra). Notebooks that use the public prediction sets read them from the local mirror
(``PBASSESS_DATA_DIR``) and fall back to the built-in data (or skip those parts) without it, so
every notebook runs either way. Each must finish well under a minute on 2 cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
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
TIMEOUT_SECONDS = 300


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    path = NOTEBOOK_DIR / name
    if not path.exists():
        pytest.fail(f"{name} is listed but missing from notebooks/")
    nb = nbformat.read(path, as_version=4)
    # A scratch folder keeps files the notebook writes out of the repository; the inline backend
    # records the figures (as Jupyter does) without any display, whatever MPLBACKEND the caller set.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    client = nbclient.NotebookClient(nb, timeout=TIMEOUT_SECONDS, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    errors = [out for out in outputs if out.get("output_type") == "error"]
    assert not errors, errors
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert 'matplotlib.use("Agg")' not in source, "a notebook must not switch its figures off"
    figures = [out for out in outputs if "image/png" in out.get("data", {})]
    assert figures, f"{name} drew no figure"


def test_listed_notebooks_match_the_folder():
    on_disk = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
    assert on_disk == sorted(NOTEBOOKS), "notebooks/ and NOTEBOOKS in tests/test_notebooks.py differ"
    assert NOTEBOOKS == sorted(NOTEBOOKS), "NOTEBOOKS is in the order of their numbers"
    numbers = [int(n[:2]) for n in NOTEBOOKS]
    assert numbers == list(range(1, len(NOTEBOOKS) + 1)), "notebooks are numbered 01, 02, ... without gaps"
