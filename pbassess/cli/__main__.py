import sys

from pbassess.cli import main

sys.exit(main())
