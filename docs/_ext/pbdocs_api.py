"""Write the API reference pages from the public names at build time.

The public API is what ``pbassess.__all__`` and the ``__all__`` of each public subpackage
(``PUBLIC_SUBPACKAGES``) list; nothing else is published (the CLI's internals, private modules,
the modules inside a subpackage, and the model-building layers behind the public functions:
``pbassess.stats``, ``pbassess.pymc_models``, ``pbassess.hierarchical``). One page per subpackage
(``docs/api/<subpackage>.rst``) lists its names with ``autosummary``; ``:toctree: generated`` gives
every public function and class a page of its own (``docs/api/generated/``). A name exported by
several subpackages is documented once, under the subpackage whose module defines it; the names of
``pbassess`` itself link to those pages. Everything under ``docs/api/`` is regenerated on every
build and is not committed.
"""

from __future__ import annotations

import importlib
import inspect
import shutil
from pathlib import Path

PACKAGE = "pbassess"
# The subpackages a user imports from (each documented through its ``__all__``), in the order of
# the reference. Not published: pbassess.cli (the command line is documented in the guides),
# pbassess.stats / pymc_models / hierarchical (the array and PyMC layers behind the functions
# below; their models are written out in the Notes of the public functions).
PUBLIC_SUBPACKAGES = [
    "pbassess.assess",
    "pbassess.calibration",
    "pbassess.active",
    "pbassess.estimation",
    "pbassess.surface",
    "pbassess.shift",
    "pbassess.plots",
    "pbassess.data",
    "pbassess.results",
    "pbassess.metrics",
    "pbassess.inference",
    "pbassess.counting",
    "pbassess.grid",
]


def documented_modules() -> list[str]:
    """The public subpackages, sorted (each gets a page listing its ``__all__``)."""
    return sorted(PUBLIC_SUBPACKAGES)


def _is_api_object(obj) -> bool:
    return inspect.isclass(obj) or inspect.isroutine(obj)


def _home(obj) -> str | None:
    """The public subpackage that defines ``obj`` (its ``__module__`` lies inside it), if any."""
    module = getattr(obj, "__module__", "") or ""
    for name in PUBLIC_SUBPACKAGES:
        if module == name or module.startswith(name + "."):
            return name
    return None


def _owner(obj) -> str:
    """The subpackage whose page documents ``obj``: the one defining it, else the first exporting it."""
    home = _home(obj)
    exporters = [m for m in PUBLIC_SUBPACKAGES if any(
        getattr(importlib.import_module(m), n, None) is obj for n in importlib.import_module(m).__all__)]
    if home in exporters:
        return home
    return exporters[0] if exporters else PACKAGE


def public_names(module_name: str) -> tuple[list[str], list[str]]:
    """(functions and classes documented on this subpackage's page, other values it exports)."""
    module = importlib.import_module(module_name)
    callables, values = [], []
    for name in module.__all__:
        if name.startswith("_") or not hasattr(module, name):
            continue
        obj = getattr(module, name)
        if _is_api_object(obj):
            if _owner(obj) == module_name:
                callables.append(name)
        else:
            values.append(name)
    return callables, values


def top_level_own() -> list[str]:
    """Functions and classes of ``pbassess.__all__`` that no public subpackage exports."""
    package = importlib.import_module(PACKAGE)
    return [name for name in package.__all__ if not name.startswith("_")
            and _is_api_object(getattr(package, name)) and _owner(getattr(package, name)) == PACKAGE]


def api_pages() -> list[str]:
    """The dotted names that get a page of their own, one per public function or class."""
    pages = [f"{PACKAGE}.{name}" for name in top_level_own()]
    for module_name in documented_modules():
        pages += [f"{module_name}.{name}" for name in public_names(module_name)[0]]
    return pages


def public_objects() -> dict[str, object]:
    """Every public function and class, once, by the dotted name of its page."""
    out = {}
    for page in api_pages():
        module_name, _, name = page.rpartition(".")
        out[page] = getattr(importlib.import_module(module_name), name)
    return out


def _first_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def module_page(module_name: str) -> str:
    """reST of one module's page: its docstring, an autosummary of its public callables, its constants."""
    module = importlib.import_module(module_name)
    callables, values = public_names(module_name)
    title = f"``{module_name}``"
    lines = [title, "=" * len(title), ""]
    lines += [f".. automodule:: {module_name}", "   :no-members:", ""]
    lines += [f".. currentmodule:: {module_name}", ""]
    if callables:
        lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in sorted(callables, key=str.lower)]
        lines.append("")
    if values:
        lines += ["Constants", "---------", ""]
        for name in values:
            value = " ".join(repr(getattr(module, name)).split())
            if len(value) > 100:
                value = value[:97] + "..."
            lines += [f".. py:data:: {name}", "   :no-index:", f"   :value: {value}", ""]
    return "\n".join(lines)


def top_level_page() -> str:
    """The names ``import pbassess`` gives, each linked to the page of the subpackage that defines it."""
    package = importlib.import_module(PACKAGE)
    homes = {}
    for module_name in documented_modules():
        callables, _ = public_names(module_name)
        module = importlib.import_module(module_name)
        for name in callables:
            homes.setdefault(id(getattr(module, name)), f"{module_name}.{name}")
    lines = ["``pbassess``", "============", "", f".. automodule:: {PACKAGE}", "   :no-members:", "",
             "The names below are importable from ``pbassess`` directly; each links to its page.", "",
             ".. list-table::", "   :header-rows: 1", "", "   * - name", "     - what"]
    own = []
    for name in package.__all__:
        if name.startswith("_"):
            continue
        obj = getattr(package, name)
        target = homes.get(id(obj))
        if target is None and (inspect.isroutine(obj) or inspect.isclass(obj)):
            own.append(name)
            continue
        if target is None:
            cell, what = f"``{name}``", f"``{obj!r}``"
        else:
            role = "class" if inspect.isclass(obj) else "func"
            cell, what = f":{role}:`{name} <{target}>`", _first_line(obj)
        lines += [f"   * - {cell}", f"     - {what}"]
    if own:
        lines += ["", "Defined in ``pbassess`` itself:", "", f".. currentmodule:: {PACKAGE}", "",
                  ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in own]
    return "\n".join(lines) + "\n"


def write_api_pages(docs_dir: Path) -> list[str]:
    """Regenerate ``docs/api/*.rst``; return the module names written."""
    out = docs_dir / "api"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    modules = documented_modules()
    (out / f"{PACKAGE}.rst").write_text(top_level_page())
    written = []
    for module_name in modules:
        callables, values = public_names(module_name)
        if callables or values or module_name.count(".") == 1:
            (out / f"{module_name}.rst").write_text(module_page(module_name))
            written.append(module_name)
    return written


def _on_config_inited(app, config) -> None:
    written = write_api_pages(Path(app.srcdir))
    # Name the pages whose stubs autosummary must generate: with ``True`` it would scan the saved
    # environment's list of documents, which lacks the pages of modules added since the last build.
    config.autosummary_generate = [f"api/{name}.rst" for name in [PACKAGE, *written]]


def setup(app):
    app.connect("config-inited", _on_config_inited)
    return {"parallel_read_safe": True, "version": "1"}
