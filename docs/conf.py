"""Sphinx configuration: the docs site is built from the docstrings, the guides and the notebooks.

``make docs`` installs the ``docs`` extra and runs ``sphinx-build -W --keep-going``. Three small
local extensions (``docs/_ext``) regenerate at every build what is not committed:
the API pages of the public names (``docs/api/``), the gallery thumbnails drawn by the
library's own plot functions (``docs/gallery/``), and copies of ``notebooks/*.ipynb``
(``docs/notebooks/``) that myst-nb renders with the outputs committed in them (``make notebooks``
writes those; ``tests/test_notebooks.py`` re-runs every notebook in ``make test`` and checks the
committed outputs against the fresh run, so the site executes nothing).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "pbassess"
author = "pbassess developers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "sphinx_design",
    "pbdocs_api",
    "pbdocs_notebooks",
    "pbdocs_gallery",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "_ext", "**.ipynb_checkpoints"]

# API pages: one per public function and class, from pbassess.__all__ and the __all__ of each public
# subpackage (docs/_ext/pbdocs_api.py: PUBLIC_SUBPACKAGES); tests/docs/test_api_reference.py checks them.
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# Maths: $...$, $$...$$ and amsmath environments in Markdown, rendered by MathJax.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# Notebooks: rendered with their committed outputs (figures included), never executed here;
# `make notebooks` executes and writes them, `make test` checks them (tests/test_notebooks.py).
nb_execution_mode = "off"
nb_merge_streams = True

html_theme = "pydata_sphinx_theme"
html_title = "pbassess"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
