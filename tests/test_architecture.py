"""The architecture as a test (issue 18): one counting core, the import contracts, no import cycles.

* Items are counted into cells only by the NumPy counting core (:mod:`pbassess.counting.core`,
  bins by :func:`pbassess.counting.assign_bins`): ``bincount``, ``add.at`` and ``histogram``
  appear in code only under ``pbassess/counting/`` (docstrings and comments do not count).
* The import contracts of ``[tool.importlinter]`` in ``pyproject.toml`` hold (``lint-imports``).
* The import graph of pbassess, function-level imports included, has no cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pbassess"

#: NumPy counting primitives that only pbassess/counting/ may call.
COUNTING_CALLS = {"bincount", "histogram", "histogram2d", "histogramdd"}

#: Files outside pbassess/counting/ allowed to count on their own, with the reason. Only compiled
#: numba code (``@njit`` kernels such as ``pbassess/active/kernels.py`` and
#: ``pbassess/active/lazy_ts.py``) qualifies: it cannot call the NumPy core. None does today.
ALLOWED: dict[str, str] = {}

def _counting_calls(path: Path) -> list[str]:
    """``line: text`` of every counting primitive used in the code of one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (
                node.attr in COUNTING_CALLS
                or (node.attr == "at" and isinstance(node.value, ast.Attribute) and node.value.attr == "add")):
            hits.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numpy":
            hits += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names if a.name in COUNTING_CALLS]
    return [f"{line}: {text}" for line, text in sorted(hits)]


def _outside_counting() -> dict[str, list[str]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("pbassess/counting/") or "__pycache__" in path.parts:
            continue
        hits = _counting_calls(path)
        if hits:
            found[rel] = hits
    return found


def test_the_scan_sees_code_and_not_docstrings(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""np.bincount(x) in a docstring."""\nimport numpy as np\n# np.add.at(a, i, 1)\n'
                 'fit_histogram = 1\nn = np.bincount([0, 1])\nnp.add.at(n, [0], 1)\nh = np.histogram([0.5], [0, 1])\n'
                 'from numpy import bincount\n', encoding="utf-8")
    assert _counting_calls(f) == ["5: np.bincount", "6: np.add.at", "7: np.histogram", "8: from numpy import bincount"]


def test_items_are_counted_only_by_the_counting_core():
    found = _outside_counting()
    bad = {f: hits for f, hits in found.items() if f not in ALLOWED}
    assert not bad, ("count with pbassess.counting (cell_codes / cell_counts / assign_bins), not NumPy directly:\n"
                     + "\n".join(f"{f}:{h}" for f, hits in bad.items() for h in hits))
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"allow-list entries that no longer count on their own (remove them): {stale}"


def _sampler_calls(path: Path) -> list[str]:
    """Calls of a sampler in code (not docstrings): ``pm.sample(``, ``nutpie.sample(``, ``compile_pymc_model(``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
            if (owner, node.func.attr) in {("pm", "sample"), ("pymc", "sample"), ("nutpie", "sample"),
                                           ("nutpie", "compile_pymc_model")}:
                hits.append(f"{node.lineno}: {owner}.{node.func.attr}")
    return hits


def test_only_the_inference_layer_runs_a_sampler():
    """Issue 18: sampler settings merge in one place, so only pbassess.inference calls pm.sample / nutpie."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("pbassess/inference/") or "__pycache__" in path.parts:
            continue
        hits = _sampler_calls(path)
        if hits:
            found[rel] = hits
    assert not found, f"sample through pbassess.inference (fit, sample_model, CompiledModel): {found}"
    assert _sampler_calls(PACKAGE / "inference" / "sampling.py")  # the scan sees the real calls


def test_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    if not lint.exists():
        pytest.fail(f"{lint} not found: install the dev extra (pip install -e '.[dev]', it holds import-linter)")
    done = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _import_graph() -> dict[str, set[str]]:
    try:
        import grimp  # installed with import-linter (the dev extra)
    except ImportError:
        pytest.fail("grimp not found: install the dev extra (pip install -e '.[dev]', it holds import-linter)")
    graph = grimp.build_graph("pbassess", include_external_packages=False)
    # every import counts, at module level or inside a function (as for import-linter); package
    # __init__ modules are ordinary nodes (an __init__ re-exporting a submodule is an edge to it)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_counting_function_level_imports():
    graph = _import_graph()
    cycles = _cycles(graph)
    detail = []
    for comp in cycles:
        members = set(comp)
        detail.append(", ".join(f"{m} -> {n}" for m in comp for n in sorted(graph[m]) if n in members))
    assert not cycles, "import cycles (function-level imports included):\n" + "\n".join(detail)
