"""Every code block of the README (and of docs/architecture.md) runs as written; the README stays short (issue 24).

* The ```python blocks run in order in one namespace (a reader types them one after the other), in a
  temporary folder (they save a file), with the Agg backend and the built-in data only.
* Every line of the ```bash / ```console blocks is either a ``make`` command (the two set-up commands,
  not run here: ``make test`` is what runs this) or a ``pbassess`` command, which runs with the venv's
  ``pbassess`` and must exit 0.
* The Python examples of ``docs/architecture.md`` (a new metric, a new model) run too, in a subprocess
  (the metric example registers a metric, which must not leak into the other tests).
* The set-up block holds exactly ``make demo`` and ``make test``; the README has at most 170 lines; every
  relative link and image it shows points at a file of the repository.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", flags=re.S | re.M)


def _blocks(*languages: str, path: Path = README) -> list[str]:
    return [body for lang, body in FENCE.findall(path.read_text(encoding="utf-8")) if lang in languages]


def _commands(block: str) -> list[str]:
    """The commands of a shell block: prompts (``$ ``) and trailing ``# comments`` removed, blank lines dropped."""
    out = []
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


SHELL_COMMANDS = [cmd for block in _blocks("bash", "console", "shell", "sh") for cmd in _commands(block)]
PBASSESS_COMMANDS = [cmd for cmd in SHELL_COMMANDS if cmd.split()[0] == "pbassess"]


def test_the_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 170, f"the README has {len(lines)} lines; measured tables belong in the guides"
    assert not re.search(r"\b\d+(\.\d+)? s (wall|in process)\b", "\n".join(lines)), "timings belong in the guides"


def test_the_setup_block_is_make_demo_and_make_test():
    setup = [_commands(block) for block in _blocks("bash", "console", "shell", "sh")
             if any(cmd.startswith("make ") for cmd in _commands(block))]
    assert setup == [["make demo", "make test"]]


def test_every_shell_line_is_make_or_pbassess():
    assert PBASSESS_COMMANDS, "the README shows no pbassess command"
    others = [cmd for cmd in SHELL_COMMANDS if cmd.split()[0] not in ("make", "pbassess")]
    assert others == [], "a README shell line this test does not run"


def _pbassess() -> str:
    beside = Path(sys.executable).with_name("pbassess")
    found = str(beside) if beside.exists() else shutil.which("pbassess")
    if found is None:  # pragma: no cover - the package is installed in every environment that runs the tests
        pytest.fail("the pbassess command is not installed next to this Python")
    return found


@pytest.mark.parametrize("command", PBASSESS_COMMANDS)
def test_readme_shell_command_runs(command, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    args = [_pbassess(), *shlex.split(command)[1:]]
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command!r} exited {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{command!r} printed nothing"


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    blocks = _blocks("python")
    assert len(blocks) >= 1, "the README has a Python quickstart"
    assert len(blocks[0].strip().splitlines()) <= 6, "the quickstart is about five lines"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)  # noqa: S102 - our own README
    # what the quickstart promises: the sentence names the least accurate class with a 95% HDI, the figure is drawn
    assert "95% HDI" in namespace["acc"].sentence()
    assert namespace["fig"].axes, "the quickstart's figure has no axes"
    if "accuracy.nc" in "".join(blocks):
        assert (tmp_path / "accuracy.nc").exists()
    plt.close("all")


def test_readme_links_and_images_point_at_files():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+://", t) and not t.startswith("#")]
    assert local, "the README links to no guide"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert missing == [], f"README links to missing files: {missing}"


def test_architecture_examples_run(tmp_path):
    blocks = _blocks("python", path=ROOT / "docs" / "architecture.md")
    assert len(blocks) >= 2, "docs/architecture.md shows a new metric and a new model"
    script = tmp_path / "architecture_examples.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    # the printed numbers the page states: Beta(28, 4) and Beta(13, 9) posterior means
    assert re.search(r"\[0\.87\d* +0\.59\d*\]", done.stdout), done.stdout[-500:]
    assert "gaussian-noise-5" in done.stdout
