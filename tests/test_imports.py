"""Every module imports in a fresh interpreter, in any order, and plots import no computing library.

The layers, the direction between topic packages and the absence of import cycles (function-level
imports included) are import-linter contracts (``[tool.importlinter]`` in ``pyproject.toml``),
checked by ``tests/test_architecture.py``.
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

def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


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


#: Computing libraries a plotting module must not import: plots only draw what results hold (the
#: pbassess side of this rule is the "Plots only draw" import-linter contract).
COMPUTING = ("pymc", "scipy", "arviz")
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
                if any(name == c or name.startswith(c + ".") for c in COMPUTING):
                    bad.append(f"{module}:{node.lineno} imports {name}")
    assert not bad, "plots must only draw:\n" + "\n".join(bad)
