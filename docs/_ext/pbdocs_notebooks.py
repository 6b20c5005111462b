"""Copy the notebooks listed in ``docs/notebooks.md`` into ``docs/notebooks/`` so myst-nb renders them.

The copies are not committed (``.gitignore``); outputs stored in the sources are dropped, so the
site always shows a fresh execution (myst-nb caches it between builds).
"""

from __future__ import annotations

import json
import re
from pathlib import Path


def listed_notebooks(docs_dir: Path) -> list[str]:
    """The notebook names (``01_quickstart``, ...) in the toctree of ``docs/notebooks.md``."""
    return re.findall(r"^notebooks/(\S+)\s*$", (docs_dir / "notebooks.md").read_text(), flags=re.M)


def copy_notebooks(docs_dir: Path) -> list[str]:
    """Copy every notebook without its outputs; remove stale copies. Return the copied names."""
    source = docs_dir.parent / "notebooks"
    target = docs_dir / "notebooks"
    target.mkdir(exist_ok=True)
    names = []
    for path in (source / f"{name}.ipynb" for name in listed_notebooks(docs_dir)):
        nb = json.loads(path.read_text())
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code":
                cell["outputs"], cell["execution_count"] = [], None
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        out = target / path.name
        if not out.exists() or out.read_text() != text:  # keep mtimes so the cache stays valid
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
