"""Every function and class a module exports (every module's ``__all__``) has a numpydoc docstring with a runnable example.

This is wider than the published API: it covers the ``__all__`` of ``pbassess`` and of every
module inside it (``_private`` ones and the CLI aside), not only the public subpackages whose
names get a page (``docs/_ext/pbdocs_api.py``; ``test_api_reference.py`` checks those pages'
Parameters, Returns and Examples). An example whose every ``>>>`` line is a comment runs nothing
and does not count. Gaps that are
known and owned by someone else are listed in ``KNOWN_GAPS`` as strict xfails: fixing one makes
its xfail fail, so the list can only shrink.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

# name -> why it is allowed to lack an example for now (remove the entry once it has one). Empty: every
# public name has a runnable example; add an entry only with the reason and the owner.
KNOWN_GAPS: dict[str, str] = {}


def _public_objects() -> list[tuple[str, object]]:
    import pbassess

    modules = []
    for info in pkgutil.iter_modules(pbassess.__path__, prefix="pbassess."):
        if info.name.rsplit(".", 1)[-1].startswith("_") or info.name == "pbassess.cli":
            continue
        modules.append(importlib.import_module(info.name))
    # then every deeper module with an ``__all__``: the docs site gives each of its names a page too
    for info in pkgutil.walk_packages(pbassess.__path__, prefix="pbassess."):
        parts = info.name.split(".")
        if len(parts) > 2 and not any(p.startswith("_") for p in parts) and parts[1] != "cli":
            modules.append(importlib.import_module(info.name))
    modules.append(pbassess)  # last: a re-exported name is named after the subpackage that defines it
    seen, out = set(), []
    for module in modules:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if not (inspect.isroutine(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{module.__name__}.{name}", obj))
    return out


PUBLIC = _public_objects()


def _runnable_example(lines: list[str]) -> bool:
    code = [ln.strip()[4:].strip() for ln in lines if ln.strip().startswith(">>>")]
    return any(c and not c.startswith("#") for c in code)


@pytest.mark.parametrize("name,obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_public_name_has_numpydoc_docstring_with_example(name, obj, request):
    if name in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True))
    doc = inspect.getdoc(obj)
    assert doc, f"{name} has no docstring"
    parsed = (numpydoc_docscrape.ClassDoc if inspect.isclass(obj) else numpydoc_docscrape.FunctionDoc)(obj)
    assert parsed["Summary"], f"{name}: the docstring has no one-line summary"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return  # an exception class needs its docstring, not an example
    assert _runnable_example(parsed["Examples"]), f"{name}: no Examples section with code that runs"


def test_the_walk_finds_the_main_entry_points():
    names = {name for name, _ in PUBLIC}
    for expected in ("pbassess.load_result", "pbassess.assess.assess_accuracy", "pbassess.calibration.smooth_ece",
                     "pbassess.plots.plot_reliability"):
        assert expected in names
    assert not any(name.rsplit(".", 1)[-1].startswith("_") for name in names)
