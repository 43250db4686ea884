"""``python -m txlab doctor`` / ``python -m txlab compile FILE.py``: the ``txlab`` command."""

import sys

from txlab.cli import run

sys.exit(run())
