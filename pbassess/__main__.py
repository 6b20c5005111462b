"""``python -m pbassess``: the ``pbassess`` command, where its script is not on ``PATH`` (as ``python -m pbassess.cli``)."""

import sys

from pbassess.cli import run

if __name__ == "__main__":
    sys.exit(run())
