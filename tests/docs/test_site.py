"""The docs site's inputs agree with each other (nothing is built here: no Sphinx run, no drawing)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_site_notebooks_match_the_tested_list_and_the_folder():
    listed = re.findall(r"^notebooks/(\S+)\s*$", (DOCS / "notebooks.md").read_text(), flags=re.M)
    tested = _load(ROOT / "tests" / "test_notebooks.py", "pbdocs_test_notebooks").NOTEBOOKS
    assert [f"{name}.ipynb" for name in listed] == tested
    assert sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")) == sorted(tested)


def test_every_gallery_entry_names_a_public_plot_function():
    gallery = _load(DOCS / "_ext" / "pbdocs_gallery.py", "pbdocs_gallery_under_test")
    names = [entry[0] for entry in gallery.ENTRIES]
    assert len(names) == len(set(names))
    for _name, _title, target, snippet in gallery.ENTRIES:
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable module prefix
            try:
                module = importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
        public, attrs = parts[cut], parts[cut:]
        assert public in module.__all__, f"{target} is not public"
        obj = module
        for attr in attrs:
            obj = getattr(obj, attr)
        assert callable(obj)
        assert attrs[-1] in snippet, f"the snippet for {target} does not call it"
    page = gallery.page(gallery.ENTRIES)
    assert page.count("grid-item-card") == len(names)
    assert all(f"({'gallery-' + n})=" in page for n in names)


@pytest.mark.parametrize("guide", ["accuracy", "calibration", "cost", "fairness", "hierarchical", "active", "session",
                                   "surfaces", "shift", "estimation", "scale"])
def test_every_method_has_a_guide_with_its_model_in_math_and_a_figure(guide):
    text = (DOCS / f"{guide}.md").read_text()
    index = (DOCS / "index.md").read_text()
    assert re.search(rf"^{guide}$", index, flags=re.M), f"{guide}.md is not in the index toctree"
    assert "$" in text, f"{guide}.md writes no maths"
    assert re.search(r"\{(figure|image)\}|!\[", text), f"{guide}.md shows no figure"


def _resolve(target: str):
    """The object a dotted name names (module, then attributes), or raise ImportError / AttributeError."""
    parts = target.lstrip("~").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            if cut == 1:
                raise
    for attr in parts[cut:]:
        obj = getattr(obj, attr)
    return obj


GUIDES = sorted(p.name for p in DOCS.glob("*.md"))


@pytest.mark.parametrize("guide", GUIDES)
def test_every_api_reference_in_a_guide_names_a_real_object(guide):
    """``{py:func}`pbassess...``` and the like: the guides stay current with the code they describe."""
    text = (DOCS / guide).read_text()
    refs = re.findall(r"\{py:(func|class|meth|mod|data|attr|obj)\}`([^`<]+?)(?:\s*<([^>]+)>)?`", text)
    missing = []
    for role, shown, target in refs:
        name = (target or shown).strip()
        if not name.startswith(("pbassess", "~pbassess")):
            continue
        try:
            obj = _resolve(name)
        except (ImportError, AttributeError):
            missing.append(name)
            continue
        if role in ("func", "meth"):
            assert callable(obj), f"{guide}: {name} is not callable"
        if role == "class":
            assert isinstance(obj, type), f"{guide}: {name} is not a class"
    assert missing == [], f"{guide} names objects that do not exist"


@pytest.mark.parametrize("guide", GUIDES)
def test_keywords_of_calls_written_in_a_guide_exist(guide):
    """Inline calls such as ``fit_surface(preds, attributes, estimator=...)`` use keywords the function takes."""
    import inspect

    text = (DOCS / guide).read_text()
    problems = []
    for call, args in re.findall(r"`(pbassess(?:\.\w+)+)\(([^`]*)\)`", text):
        try:
            func = _resolve(call)
        except (ImportError, AttributeError):
            problems.append(f"{call} does not exist")
            continue
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            continue
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            continue
        for keyword in re.findall(r"(\w+)\s*=", args):
            if keyword not in params:
                problems.append(f"{call}() takes no {keyword}=")
    assert problems == []


def test_autosummary_is_told_every_api_page_even_new_ones(tmp_path):
    """A module added since the last build gets its stubs: the pages are named to autosummary explicitly."""
    from types import SimpleNamespace

    api = _load(DOCS / "_ext" / "pbdocs_api.py", "pbdocs_api_config_under_test")
    config = SimpleNamespace(autosummary_generate=True)
    api._on_config_inited(SimpleNamespace(srcdir=str(tmp_path)), config)
    listed = config.autosummary_generate
    assert listed[0] == "api/pbassess.rst"
    assert sorted(listed) == sorted(f"api/{p.name}" for p in (tmp_path / "api").glob("*.rst"))
    assert "api/pbassess.plots.estimation.rst" in listed or "api/pbassess.plots.rst" in listed
