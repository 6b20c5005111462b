"""Write the API reference pages from each module's ``__all__`` at build time.

One page per documented module (``docs/api/<module>.rst``) lists its public names with
``autosummary``; ``:toctree: generated`` then gives every public function and class a page of
its own (``docs/api/generated/``). Only names in a module's ``__all__`` are listed, so internal
helpers (``_name``) and modules a package does not export never reach the site. Everything under
``docs/api/`` is regenerated on every build and is not committed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
from pathlib import Path

PACKAGE = "pbassess"
# Modules that are not part of the Python API (the CLI's entry point is documented in the guides).
SKIP = {"pbassess.cli"}


def documented_modules() -> list[str]:
    """Every module of pbassess (recursively, not ``_private`` ones) that declares ``__all__``, sorted."""
    package = importlib.import_module(PACKAGE)
    names = []
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{PACKAGE}."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts) or any(info.name.startswith(s) for s in SKIP):
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "__all__", None):
            names.append(info.name)
    return sorted(names)


def _exported_by_parent(module_name: str) -> set[int]:
    """ids of the objects the parent package already exports (they are documented there)."""
    parent_name = module_name.rpartition(".")[0]
    if parent_name == PACKAGE or not parent_name:
        return set()
    parent = importlib.import_module(parent_name)
    return {id(getattr(parent, n)) for n in getattr(parent, "__all__", ()) if hasattr(parent, n)}


def public_names(module_name: str) -> tuple[list[str], list[str]]:
    """(functions and classes, other values) named in a module's ``__all__``."""
    module = importlib.import_module(module_name)
    seen = _exported_by_parent(module_name)
    callables, values = [], []
    for name in module.__all__:
        if name.startswith("_") or not hasattr(module, name):
            continue
        obj = getattr(module, name)
        if id(obj) in seen or (not inspect.isclass(obj) and not inspect.isroutine(obj) and name in
                               getattr(importlib.import_module(module_name.rpartition(".")[0]), "__all__", ())):
            continue
        (callables if inspect.isclass(obj) or inspect.isroutine(obj) else values).append(name)
    return callables, values


def _first_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def module_page(module_name: str) -> str:
    """reST of one module's page: its docstring, an autosummary of its public callables, its constants."""
    module = importlib.import_module(module_name)
    callables, values = public_names(module_name)
    title = f"``{module_name}``"
    lines = [title, "=" * len(title), ""]
    parent_name, _, last = module_name.rpartition(".")
    shadowed = parent_name and not inspect.ismodule(getattr(importlib.import_module(parent_name), last, module))
    if not shadowed:  # e.g. pbassess.inference.diagnostics is also a function of pbassess.inference
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
