"""``python -m txlab.timeline ...``: deprecated spelling of ``python -m txlab.examples.traces ...``
(the command records the example kernels, which sit above the timeline package). It runs that
command in this process's place; this alias goes in the next release."""

import os
import sys

if __name__ == "__main__":
    print("python -m txlab.timeline is deprecated: run python -m txlab.examples.traces", file=sys.stderr)
    os.execv(sys.executable, [sys.executable, "-m", "txlab.examples.traces", *sys.argv[1:]])
