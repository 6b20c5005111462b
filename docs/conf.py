"""Sphinx configuration: the docs site is built from the docstrings, the guides and the notebooks.

``make docs`` installs the ``docs`` extra and runs ``sphinx-build -W --keep-going``. Three small
local extensions (``docs/_ext``) regenerate at every build what is not committed:
the API pages from each module's ``__all__`` (``docs/api/``), the gallery thumbnails drawn by the
library's own plot functions (``docs/gallery/``), and copies of ``notebooks/*.ipynb``
(``docs/notebooks/``) that myst-nb executes (cached in ``docs/_build/.jupyter_cache``).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))
# The notebook kernels inherit this: their figures are recorded by the inline backend even when the
# caller exported MPLBACKEND=Agg (the Makefile does). The gallery switches its own process to Agg.
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"

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

# API pages: one per public function and class, from the names in each module's __all__.
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# Maths: $...$, $$...$$ and amsmath environments in Markdown, rendered by MathJax.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# Notebooks: executed at build time (small settings inside each notebook), cached between builds.
nb_execution_mode = "cache"
nb_execution_timeout = 600  # per notebook; each takes well under a minute on an idle 2-core machine
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

html_theme = "pydata_sphinx_theme"
html_title = "pbassess"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
