"""The docstrings the site renders parse as reStructuredText without errors (no Sphinx run).

``make docs`` treats warnings as errors, so a stray ``|x|`` (a substitution to docutils) or a
misaligned table in a module docstring breaks the build; this finds it in seconds, naming the
module. Sphinx-only roles and directives (``:func:``, ``.. autosummary::``) are unknown to bare
docutils and ignored here.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import sys
import warnings
from pathlib import Path

import pytest

docutils_core = pytest.importorskip("docutils.core")
docscrape_sphinx = pytest.importorskip("numpydoc.docscrape_sphinx")

ROOT = Path(__file__).resolve().parents[2]
SPHINX_ONLY = ("Unknown interpreted text role", "Unknown directive type", "No role entry", "No directive entry",
               'Trying "', "Problems with \"include\"")


def _api():
    spec = importlib.util.spec_from_file_location("pbdocs_api_for_rest", ROOT / "docs" / "_ext" / "pbdocs_api.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pbdocs_api_for_rest"] = module
    spec.loader.exec_module(module)
    return module


def _rendered_docstrings() -> list[tuple[str, str]]:
    api = _api()
    out = []
    for module_name in api.documented_modules():
        callables, values = api.public_names(module_name)
        module = importlib.import_module(module_name)
        if (callables or values or module_name.count(".") == 1) and module.__doc__:
            out.append((module_name, module.__doc__))
        for name in callables:
            doc = inspect.getdoc(getattr(module, name))
            if doc:
                out.append((f"{module_name}.{name}", doc))
    return out


DOCSTRINGS = _rendered_docstrings()


def rest_problems(text: str) -> list[str]:
    """docutils errors and warnings of a numpydoc docstring rendered the way Sphinx renders it."""
    stream = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpydoc's "Unknown section" notes: fine for module prose
        rendered = str(docscrape_sphinx.SphinxDocString(text))
    docutils_core.publish_doctree(rendered, settings_overrides={"warning_stream": stream, "report_level": 2,
                                                                "halt_level": 5})
    return [line for line in stream.getvalue().splitlines()
            if ("ERROR" in line or "WARNING" in line or "SEVERE" in line) and not any(s in line for s in SPHINX_ONLY)]


def test_the_checker_sees_a_substitution_and_a_bad_table():
    assert rest_problems("Summary.\n\nThe gap |theta_b - s_b| matters.\n")
    assert rest_problems("Summary.\n\n===  ===\na    b\n===  ===\nlong text here  c\n===  ===\n")
    assert not rest_problems("Summary.\n\nThe gap ``|theta_b - s_b|`` matters.\n")


@pytest.mark.parametrize("name,doc", DOCSTRINGS, ids=[name for name, _ in DOCSTRINGS])
def test_docstring_is_valid_rest(name, doc):
    assert not rest_problems(doc), f"{name}: {rest_problems(doc)}"
