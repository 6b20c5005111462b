"""The README's Python quickstart runs as written (in a temporary folder: it saves a file)."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

README = Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_quickstart_runs(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    blocks = _python_blocks()
    assert blocks, "the README has a Python quickstart"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(blocks[0], "README.md quickstart", "exec"), namespace)  # noqa: S102 - our own README
    assert (tmp_path / "accuracy.nc").exists()
    assert namespace["cmp"].summary().shape[0] == 3
    plt.close("all")
