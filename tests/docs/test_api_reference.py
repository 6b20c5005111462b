"""The API reference publishes the public names only, each with its sections; the models show their maths.

Public means listed in ``pbassess.__all__`` or in the ``__all__`` of a public subpackage
(``PUBLIC_SUBPACKAGES`` of ``docs/_ext/pbdocs_api.py``, the generator of the pages; every other
subpackage is named in ``NOT_PUBLIC`` below with the reason). Each public function or class gets
one page, under the subpackage that defines it. Its numpydoc docstring has Parameters (when it takes
any), Returns (for a function that returns a value) and an Examples section with doctest lines;
pytest's ``--doctest-modules`` over ``pbassess`` runs those examples in ``make test``. The functions
that fit a model write it in a ``.. math::`` block (rendered by MathJax). Nothing is built here.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

docscrape = pytest.importorskip("numpydoc.docscrape")

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


API = _load(ROOT / "docs" / "_ext" / "pbdocs_api.py", "pbdocs_api_reference_under_test")

# Subpackages without pages, and why (a new subpackage must be added to one list or the other).
NOT_PUBLIC = {
    "pbassess.cli": "the command line; documented in the guides and by `pbassess --help`",
    "pbassess.stats": "NumPy/SciPy building blocks behind the public functions",
    "pbassess.pymc_models": "the Specs and PyMC builders behind the public functions (their models are in the Notes)",
    "pbassess.hierarchical": "the builders behind assess_hierarchical and shift's hierarchical trend",
}

# The functions that fit a model: each writes the model in a ``.. math::`` block.
MODEL_FUNCTIONS = [
    "pbassess.assess.assess_accuracy",
    "pbassess.assess.assess_calibration",
    "pbassess.assess.assess_confusion",
    "pbassess.assess.assess_hierarchical",
    "pbassess.assess.assess_hierarchical_calibration",
    "pbassess.assess.compare_groups",
    "pbassess.assess.compare_models",
    "pbassess.assess.compare_priors",
    "pbassess.estimation.estimate",
    "pbassess.surface.fit_surface",
    "pbassess.shift.fit_accuracy_trend",
    "pbassess.calibration.recalibrate",
    "pbassess.calibration.shrinkage_posterior",
    "pbassess.active.simulate",
    "pbassess.active.LabelingSession",
]
MIN_MATH_PAGES = 10

# name -> the sections its docstring still lacks. A strict xfail: completing one makes the test
# fail until its entry is removed, so the list can only shrink.
SECTION_GAPS: dict[str, str] = {}


def _public_objects_from_all() -> dict[int, object]:
    """Every function and class in ``pbassess.__all__`` or a public subpackage's, by id (computed here)."""
    out = {}
    for module_name in ["pbassess", *API.PUBLIC_SUBPACKAGES]:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isroutine(obj):
                out[id(obj)] = obj
    return out


PAGES = API.public_objects()


def test_every_subpackage_is_public_or_named_as_not_public():
    import pbassess

    subpackages = sorted(f"pbassess.{info.name}" for info in pkgutil.iter_modules(pbassess.__path__)
                         if info.ispkg and not info.name.startswith("_"))
    assert sorted([*API.PUBLIC_SUBPACKAGES, *NOT_PUBLIC]) == subpackages
    for name in API.PUBLIC_SUBPACKAGES:
        assert importlib.import_module(name).__all__, f"{name} is public but declares no __all__"


def test_api_pages_are_exactly_the_public_names_each_once():
    pages = API.api_pages()
    assert len(pages) == len(set(pages))
    expected = _public_objects_from_all()
    ids = [id(obj) for obj in PAGES.values()]
    assert len(ids) == len(set(ids)), "an object has two pages"
    assert set(ids) == set(expected), "the pages and the public names differ"
    for page in pages:
        module_name, _, name = page.rpartition(".")
        assert module_name in ["pbassess", *API.PUBLIC_SUBPACKAGES], page
        assert name in importlib.import_module(module_name).__all__, page
    # internals never get a page: private names, the CLI, the layers behind the functions
    assert not any(part.startswith("_") for page in pages for part in page.split("."))
    assert not any(page.startswith(tuple(f"{m}." for m in NOT_PUBLIC)) for page in pages)
    # a name re-exported by pbassess is documented under the subpackage that defines it
    assert "pbassess.assess.assess_accuracy" in pages and "pbassess.assess_accuracy" not in pages


def test_the_generated_rst_lists_every_page_and_nothing_else(tmp_path):
    written = API.write_api_pages(tmp_path)
    files = sorted(p.name for p in (tmp_path / "api").glob("*.rst"))
    assert files == sorted(f"{m}.rst" for m in ["pbassess", *written])
    assert sorted(written) == sorted(API.PUBLIC_SUBPACKAGES)
    listed = []
    for path in (tmp_path / "api").glob("*.rst"):
        text = path.read_text()
        module = re.search(r"^\.\. currentmodule:: (\S+)$", text, flags=re.M)
        for block in re.findall(r"^\.\. autosummary::\n((?:   .*\n|\n)+)", text + "\n", flags=re.M):
            listed += [f"{module.group(1)}.{n}" for n in re.findall(r"^   (\w+)$", block, flags=re.M)]
    assert sorted(listed) == sorted(API.api_pages())


def _parameters(obj) -> list[str]:
    if inspect.isclass(obj) and obj.__init__ is object.__init__:
        return []  # e.g. an abstract base: nothing to pass
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")]


def _returns_a_value(func) -> bool:
    """From the annotation, else from the source: a ``return <value>`` or a ``yield`` in its own body."""
    try:
        node = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    except (OSError, TypeError, IndexError):
        return True
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    if node.returns is not None:
        return not (isinstance(node.returns, ast.Constant) and node.returns.value is None)

    def search(parent) -> bool:
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                return True
            if isinstance(child, ast.Return) and child.value is not None and not (
                    isinstance(child.value, ast.Constant) and child.value.value is None):
                return True
            if search(child):
                return True
        return False

    return search(node)


def _parsed(obj):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (docscrape.ClassDoc if inspect.isclass(obj) else docscrape.FunctionDoc)(obj)


def section_problems(obj) -> list[str]:
    """The numpydoc sections a public function or class lacks."""
    doc = _parsed(obj)
    problems = []
    if _parameters(obj) and not (doc["Parameters"] or doc["Other Parameters"]):
        problems.append("Parameters")
    if not inspect.isclass(obj) and _returns_a_value(obj) and not (doc["Returns"] or doc["Yields"]):
        problems.append("Returns")
    code = [line.strip()[4:].strip() for line in doc["Examples"] if line.strip().startswith(">>>")]
    if not any(c and not c.startswith("#") for c in code):
        problems.append("Examples")
    elif all("doctest: +SKIP" in line for line in doc["Examples"] if line.strip().startswith(">>>")):
        problems.append("Examples (every line skipped)")
    return problems


def test_the_section_checker_sees_what_is_missing():
    def documented(x, y=1):
        """Add.

        Parameters
        ----------
        x, y : int
            The numbers.

        Returns
        -------
        int

        Examples
        --------
        >>> documented(1)
        2
        """
        return x + y

    def bare(x):
        """Add one."""
        return x + 1

    def prints(x):
        """Print.

        Parameters
        ----------
        x : int

        Examples
        --------
        >>> prints(1)
        1
        """
        print(x)

    assert section_problems(documented) == []
    assert section_problems(bare) == ["Parameters", "Returns", "Examples"]
    assert section_problems(prints) == []


@pytest.mark.parametrize("name", list(PAGES), ids=list(PAGES))
def test_public_page_has_parameters_returns_and_a_runnable_example(name, request):
    obj = PAGES[name]
    if name in SECTION_GAPS:
        request.applymarker(pytest.mark.xfail(reason=SECTION_GAPS[name], strict=True))
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        assert inspect.getdoc(obj), f"{name} has no docstring"
        return
    assert section_problems(obj) == [], f"{name} lacks {section_problems(obj)}"
    # the example runs under --doctest-modules: the doctest finder of its module collects it
    module = importlib.import_module(obj.__module__)
    found = {test.name for test in doctest.DocTestFinder().find(module) if test.examples}
    assert f"{module.__name__}.{obj.__qualname__}" in found, f"{name}: its example is not collected as a doctest"


def _has_math(obj) -> bool:
    return bool(re.search(r"^\s*\.\. math::", inspect.getdoc(obj) or "", flags=re.M))


@pytest.mark.parametrize("name", MODEL_FUNCTIONS)
def test_model_fitting_function_writes_its_model_in_math(name):
    assert name in PAGES, f"{name} has no API page"
    obj = PAGES[name]
    assert _has_math(obj), f"{name}: no `.. math::` block with the model"
    notes = "\n".join(_parsed(obj)["Notes"])
    assert ".. math::" in notes, f"{name}: the model belongs in the Notes section"


def test_enough_pages_show_maths_and_mathjax_renders_it():
    with_math = [name for name, obj in PAGES.items() if _has_math(obj)]
    assert len(with_math) >= MIN_MATH_PAGES, with_math
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert '"sphinx.ext.mathjax"' in conf
