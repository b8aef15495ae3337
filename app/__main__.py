"""``python -m narrative_debugger.app``: the same as the ``narrative-debugger`` command."""

from narrative_debugger.app.cli.main import entry

if __name__ == "__main__":
    entry()
