"""Sphinx configuration: the docs site is built from the docstrings and the notebooks.

Build with ``pip install -e '.[docs]' && sphinx-build -b html docs docs/_build``.
"""

project = "pbassess"
author = "pbassess developers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
]
autosummary_generate = True
numpydoc_show_class_members = False
nb_execution_mode = "off"
html_theme = "pydata_sphinx_theme"
exclude_patterns = ["_build"]
