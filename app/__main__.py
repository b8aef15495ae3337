"""``python -m narrative_debugger.app``: the same as the ``narrative-debugger`` command."""

import sys

from narrative_debugger.app.cli import main

if __name__ == "__main__":
    sys.exit(main())
