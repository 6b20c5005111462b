"""Execute the notebooks and write them back with their outputs, so GitHub and the site show the figures.

``make notebooks`` runs ``python docs/_ext/pbdocs_execute.py`` (all of ``notebooks/*.ipynb``;
``make notebooks NB="02 06"`` or ``python docs/_ext/pbdocs_execute.py 02 06`` runs only those). Each notebook runs top to bottom in a scratch folder (files it writes stay
out of the repository) with the inline backend at a modest resolution, and is written back with:

- its outputs (figures as PNG; no execution timings, so a re-run changes only what changed);
- ``metadata["pbassess"]["source_sha256"]``, a hash of its code cells' sources.

``tests/test_notebooks.py`` (in ``make test``) executes every notebook again with :func:`execute`
and compares with the committed file (:func:`compare`): the same figures per cell, no error, and
the stored hash equal to the sources' (a notebook edited without re-running fails). The docs build
renders the committed outputs (``nb_execution_mode = "off"``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
TIMEOUT_SECONDS = 600
# Figures at 80 dpi (6.4 x 4.8 in -> 512 x 384 px): sharp on GitHub, a few tens of kB each.
FIGURE_DPI = 80
META_KEY = "pbassess"


def source_hash(nb) -> str:
    """sha256 of the code cells' sources (what the outputs were computed from)."""
    text = "\n\x00\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    return hashlib.sha256(text.encode()).hexdigest()


def figures_per_cell(nb) -> list[int]:
    """The number of figures (PNG or SVG outputs) of each code cell, in order."""
    return [sum(1 for out in cell.get("outputs", [])
                if {"image/png", "image/svg+xml"} & set(out.get("data", {})))
            for cell in nb.cells if cell.cell_type == "code"]


def _carriage_returns(text: str) -> str:
    """What a terminal shows: on each line, only the text after its last carriage return."""
    return "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line.rstrip("\r") else line.rstrip("\r")
                     for line in text.split("\n"))


def merge_streams(outputs: list) -> list:
    """Merge consecutive stdout (or stderr) chunks and resolve carriage returns, as Jupyter saves them.

    A progress bar redrawn with ``\r`` then keeps its last state only, instead of one output per redraw.
    """
    merged: list = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    for out in merged:
        if out.get("output_type") == "stream":
            out["text"] = _carriage_returns(out["text"])
    return merged


def errors(nb) -> list[str]:
    """``ename: evalue`` of every error output."""
    return [f"{out.get('ename')}: {out.get('evalue')}" for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.get("output_type") == "error"]


def execute(path: Path, workdir: Path | None = None, timeout: int = TIMEOUT_SECONDS):
    """Run a notebook top to bottom and return it with its outputs (raises on the first error).

    The kernel records figures with the inline backend (as Jupyter does) at ``FIGURE_DPI``,
    whatever ``MPLBACKEND`` the caller set; it runs in ``workdir`` (a fresh scratch folder by default).
    """
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    saved = {key: os.environ.get(key) for key in ("MPLBACKEND", "MATPLOTLIBRC", "PYTHONWARNINGS")}
    with tempfile.TemporaryDirectory() as scratch:
        # the kernel inherits these: matplotlib reads its defaults from $MATPLOTLIBRC
        rc = Path(scratch) / "matplotlibrc"
        rc.write_text(f"figure.dpi: {FIGURE_DPI}\nsavefig.dpi: {FIGURE_DPI}\n")
        os.environ["MATPLOTLIBRC"] = str(rc)
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        # tqdm's note that ipywidgets is absent (progress bars are then text, as in a terminal)
        os.environ["PYTHONWARNINGS"] = "ignore:IProgress not found"
        try:
            client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                                             resources={"metadata": {"path": str(workdir or scratch)}})
            client.execute()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    nb.metadata[META_KEY] = {"source_sha256": source_hash(nb)}
    return nb


def compare(committed, executed) -> list[str]:
    """What differs between a committed notebook and a fresh execution of it (empty: they agree)."""
    problems = []
    if not any(cell.get("outputs") for cell in committed.cells if cell.cell_type == "code"):
        problems.append("the committed notebook has no outputs (run `make notebooks`)")
    stored = committed.metadata.get(META_KEY, {}).get("source_sha256")
    if stored != source_hash(committed):
        problems.append("the committed outputs were not computed from its current sources (run `make notebooks`)")
    if errors(committed):
        problems.append(f"the committed notebook shows errors: {errors(committed)}")
    if errors(executed):
        problems.append(f"the notebook raises: {errors(executed)}")
    want, got = figures_per_cell(committed), figures_per_cell(executed)
    if want != got:
        problems.append(f"figures per code cell: committed {want}, executed now {got}")
    if not sum(got):
        problems.append("the notebook draws no figure")
    return problems


def main(argv: list[str] | None = None) -> int:
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all of notebooks/)")
    args = parser.parse_args(argv)
    paths = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    if args.names:  # a name, a file name or a number prefix ("02")
        chosen = [[p for p in paths if p.name == n or p.stem == n or p.name.startswith(n)] for n in args.names]
        unknown = [n for n, found in zip(args.names, chosen, strict=True) if not found]
        if unknown:
            parser.error(f"no notebook named {', '.join(unknown)} in {NOTEBOOK_DIR}")
        paths = sorted({p for found in chosen for p in found})
    if not os.environ.get("PBASSESS_DATA_DIR"):
        print("note: PBASSESS_DATA_DIR is not set; notebooks fall back to the built-in data", file=sys.stderr)
    failed = 0
    for path in paths:
        start = time.perf_counter()
        try:
            nb = execute(path)
        except Exception as exc:  # report the notebook and go on with the others
            failed += 1
            print(f"{path.name}: FAILED ({type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]})")
            continue
        nbformat.write(nb, path)
        print(f"{path.name}: {sum(figures_per_cell(nb))} figures, {path.stat().st_size / 1024:.0f} kB, "
              f"{time.perf_counter() - start:.0f} s")
    total = sum(p.stat().st_size for p in NOTEBOOK_DIR.glob("*.ipynb"))
    print(f"notebooks/: {total / 1024:.0f} kB in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
