"""Execute every notebook in ``notebooks/`` top to bottom (nbclient, 600 s per notebook).

Marked slow; skipped cleanly when nbclient/nbformat/ipykernel are not installed (they are in
the ``dev`` extra).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    _skip_without_public_data(nb)
    # Run in a scratch folder so files the notebook writes do not land in the repository;
    # MPLBACKEND keeps matplotlib off any display.
    env_backend = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "Agg"
    try:
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         resources={"metadata": {"path": str(tmp_path)}})
        client.execute()
    finally:
        if env_backend is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = env_backend
    errors = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    assert not errors, errors


def _skip_without_public_data(nb) -> None:
    """Skip a notebook that reads a downloadable set (e.g. CIFAR-100) when no mirror is present."""
    from pbassess.data.registry import list_models

    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    needed = [c.name for c in list_models() if not c.builtin and f'"{c.name}"' in source]
    mirror = os.environ.get("PBASSESS_DATA_DIR")
    if needed and not (mirror and Path(mirror).is_dir()):
        pytest.skip(f"needs {', '.join(needed)} from the local mirror (PBASSESS_DATA_DIR / ../shared/data)")


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ holds no .ipynb file"
