"""``python -m tests.support.savegen``: write generated saves (a checkout-only tool)."""

import sys

from tests.support.savegen.generator import main

if __name__ == "__main__":
    sys.exit(main())
