import sys

from pbassess.cli import run

sys.exit(run())
