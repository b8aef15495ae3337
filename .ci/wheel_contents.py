"""Check a built wheel against the checkout: it must hold the code, both token tables and
the whole sample campaign, and nothing from tests/ (the save generator) or the screenshots.

Usage: python .ci/wheel_contents.py WHEEL CHECKOUT   (exit 1 with the reasons when wrong)
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

PACKAGE = "narrative_debugger"
CODE = ("app", "widgets", "models", "resources", "sample_saves")


def expected(root: Path) -> set[str]:
    """Paths the wheel must hold, as wheel names, from the checkout."""
    want = {f"{PACKAGE}/{p.relative_to(root).as_posix()}" for top in CODE for p in (root / top).rglob("*.py") if "__pycache__" not in p.parts}
    want |= {f"{PACKAGE}/resources/encodings/{name}.tiktoken.gz" for name in ("cl100k_base", "o200k_base")}
    samples = root / "sample_saves"
    want |= {f"{PACKAGE}/{p.relative_to(root).as_posix()}" for p in [*samples.glob("*.json"), *(samples / "content").rglob("*.yaml")]}
    return want


def main(wheel: str, root: str) -> int:
    names = set(zipfile.ZipFile(wheel).namelist())
    want = expected(Path(root))
    problems = [f"missing: {name}" for name in sorted(want - names)]
    problems += [f"not in the checkout (stale build?): {name}" for name in sorted(names) if name.endswith(".py") and name not in want]
    unwanted = ("tests/", "savegen", "screenshots/", "generator.py", "conftest.py")
    problems += [f"must not ship: {name}" for name in sorted(names) if any(u in name for u in unwanted)]
    tops = {name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")}
    if tops != {PACKAGE}:
        problems.append(f"top-level names other than {PACKAGE} would collide in site-packages: {sorted(tops - {PACKAGE})}")
    for p in problems:
        print(f"  {p}", file=sys.stderr)
    code = sum(1 for n in names if n.endswith(".py"))
    data = sum(1 for n in names if n.endswith((".gz", ".json", ".yaml")))
    print(f"  {len(names)} files: {code} modules, {data} data files (token tables, sample saves, content); {'OK' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
