"""Copy the notebooks listed in ``docs/notebooks.md`` into ``docs/notebooks/`` so myst-nb renders them.

The copies are not committed (``.gitignore``). They keep the outputs committed in the sources
(``make notebooks`` writes them; ``tests/test_notebooks.py`` checks them against a fresh run), and
myst-nb renders those without executing anything (``nb_execution_mode = "off"``).
"""

from __future__ import annotations

import re
from pathlib import Path


def listed_notebooks(docs_dir: Path) -> list[str]:
    """The notebook names (``01_quickstart``, ...) in the toctree of ``docs/notebooks.md``."""
    return re.findall(r"^notebooks/(\S+)\s*$", (docs_dir / "notebooks.md").read_text(), flags=re.M)


def copy_notebooks(docs_dir: Path) -> list[str]:
    """Copy every notebook with its outputs; remove stale copies. Return the copied names."""
    source = docs_dir.parent / "notebooks"
    target = docs_dir / "notebooks"
    target.mkdir(exist_ok=True)
    names = []
    for path in (source / f"{name}.ipynb" for name in listed_notebooks(docs_dir)):
        text = path.read_text()
        out = target / path.name
        if not out.exists() or out.read_text() != text:  # keep mtimes: Sphinx re-reads only changed pages
            out.write_text(text)
        names.append(path.name)
    for stale in target.glob("*.ipynb"):
        if stale.name not in names:
            stale.unlink()
    return names


def _on_config_inited(app, config) -> None:
    copy_notebooks(Path(app.srcdir))


def setup(app):
    app.connect("config-inited", _on_config_inited)
    return {"parallel_read_safe": True, "version": "1"}
