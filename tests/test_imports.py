"""No import cycles and imports follow the layer order (issue 7).

Layers: data -> counting -> stats / metrics -> pymc_models / inference -> results ->
assess / active / hierarchical / calibration / ... -> plots / cli / report. A module imports, at
module level, only from its own or earlier layers. Imports inside functions may reach later
layers only where listed below (a result's ``plot()`` hands itself to its plotting module; a
data helper borrows the project's one seed handler). The module-level import graph must have no
cycle, and every module imports in a fresh interpreter in several orders.
"""

from __future__ import annotations

import ast
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pbassess"

LAYERS = {
    "errors": 0, "constants": 0, "_json": 0,
    "data": 1, "scale": 1,
    "counting": 2,
    "stats": 3, "metrics": 3,
    "pymc_models": 4, "inference": 4,
    "results": 5,
    # assessment layer (the API): anything not named here and not below
    "plots": 7, "cli": 7, "report": 7,
}
API_LAYER = 6

#: (importing module prefix, imported module prefix) allowed *inside functions* against the order.
LAZY_ALLOWED = {
    ("pbassess.results.", "pbassess.plots."): "result.plot() delegates drawing to the plots layer",
    ("pbassess.active.result", "pbassess.plots.active"): "SimulationResult.plot()",
    ("pbassess.estimation.api", "pbassess.plots.estimation"): "EstimationResult.plot()",
    ("pbassess.assess.pooling", "pbassess.plots.hierarchical"): "pooling result .plot()",
    ("pbassess.assess.rope_labeling", "pbassess.plots.compare"): "ROPE-labeling result .plot()",
    ("pbassess.surface.result", "pbassess.plots.surface"): "surface result .plot()",
    ("pbassess.results.calibration", "pbassess.calibration."): "extra calibration keys in to_json",
    ("pbassess.data.synthetic", "pbassess.stats.sampling"): "the project's one seed handler (as_generator)",
    ("pbassess.results.base", "pbassess"): "__version__ recorded in saved files",
}


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def _layer(module: str) -> int:
    parts = module.split(".")
    return -1 if len(parts) == 1 else LAYERS.get(parts[1], API_LAYER)


def _imports(path: Path):
    """(imported module, line, at module level?) for every absolute pbassess import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    top |= {id(c) for n in tree.body if isinstance(n, (ast.If, ast.Try)) for c in ast.walk(n)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from pbassess.x import y` imports the submodule pbassess.x.y when there is one
            # (which works while pbassess.x is still initialising), else takes a name from pbassess.x
            names = sorted({f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                            for a in node.names})
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name == "pbassess" or name.startswith("pbassess."):
                yield name, node.lineno, id(node) in top


def _guarded_by_type_checking(path: Path) -> set[int]:
    lines = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines |= {c.lineno for c in ast.walk(node) if hasattr(c, "lineno")}
    return lines


def test_module_level_imports_follow_the_layers():
    bad = []
    for module, path in MODULES.items():
        if module == "pbassess":
            continue
        skip = _guarded_by_type_checking(path)
        for name, line, at_top in _imports(path):
            if at_top and line not in skip and _layer(name) > _layer(module):
                bad.append(f"{module}:{line} imports {name}")
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_imports_inside_functions_reach_later_layers_only_where_allowed():
    bad = []
    for module, path in MODULES.items():
        if module == "pbassess":
            continue
        for name, line, at_top in _imports(path):
            if at_top or _layer(name) <= _layer(module):
                continue
            if not any(module.startswith(a) and (name == b or name.startswith(b)) for a, b in LAZY_ALLOWED):
                bad.append(f"{module}:{line} imports {name}")
    assert not bad, "function-level imports against the layer order:\n" + "\n".join(bad)


def _graph():
    graph = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        skip = _guarded_by_type_checking(path)
        for name, line, at_top in _imports(path):
            if not at_top or line in skip:
                continue
            target = name
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != module:
                graph[module].add(target)
    # Implicit edges to parent packages are left out: a package __init__ importing its own
    # submodules is the normal layout; the fresh-interpreter tests below cover that order.
    return graph


def test_no_cycles_among_module_level_imports():
    graph = _graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


ORDERS = {
    "sorted": sorted(MODULES),
    "reversed": sorted(MODULES, reverse=True),
    "shuffled": random.Random(7).sample(sorted(MODULES), len(MODULES)),
}


@pytest.mark.parametrize("order", list(ORDERS))
def test_every_module_imports_in_a_fresh_interpreter(order):
    names = [m for m in ORDERS[order] if m != "pbassess.cli.__main__"]
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={"MPLBACKEND": "Agg", "PATH": "", "HOME": str(Path.home())})
    assert done.returncode == 0, done.stderr.strip().splitlines()[-3:]


@pytest.mark.parametrize("first", ["pbassess.results", "pbassess.assess", "pbassess.active", "pbassess.plots.accuracy",
                                   "pbassess.active.session_result", "pbassess.results.registry", "pbassess.cli"])
def test_a_module_imported_first_loads_alone(first):
    done = subprocess.run([sys.executable, "-c", f"import {first}"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env={"MPLBACKEND": "Agg", "PATH": "", "HOME": str(Path.home())})
    assert done.returncode == 0, done.stderr.strip().splitlines()[-3:]


#: Computing modules a plotting module must not import: plots only draw what results hold.
COMPUTING = ("pbassess.stats", "pbassess.metrics", "pbassess.counting", "pbassess.inference", "pbassess.pymc_models",
             "pymc", "scipy", "arviz")
#: Known exceptions of plots importing a computing module (none today).
PLOT_COMPUTE_EXCEPTIONS: set[tuple[str, str]] = set()


def test_plots_import_no_computing_module():
    bad = []
    for module, path in MODULES.items():
        if not module.startswith("pbassess.plots"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if (module, name) in PLOT_COMPUTE_EXCEPTIONS:
                    continue
                if any(name == c or name.startswith(c + ".") for c in COMPUTING) or (
                        name.startswith("pbassess.") and _layer(name) == API_LAYER):
                    bad.append(f"{module}:{node.lineno} imports {name}")
    assert not bad, "plots must only draw:\n" + "\n".join(bad)
