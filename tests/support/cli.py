"""Running the command line in-process from a test."""

from __future__ import annotations

from narrative_debugger.app.cli.main import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    """``narrative-debugger ARGS`` in this process: (exit status, stdout, stderr) of that
    run alone (what was captured before it is dropped)."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
