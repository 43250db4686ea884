"""``python -m txlab.api ...``: :func:`txlab.api.cli.main`."""

import sys

from txlab.api.cli import main

if __name__ == "__main__":
    sys.exit(main())
