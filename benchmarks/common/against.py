"""Before and after in one run: the same benchmark, its cells and seeds alike, on another source tree.

``--against /work/main`` runs this benchmark script first with ``voice`` imported from that tree (a
subprocess with its PYTHONPATH), then in-process from this one, so both columns come from one
invocation on one machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# Runs the script with setuptools' editable-install finder taken out: it would import a module the
# other tree lacks from this one, so "before" would quietly include part of "after". The current folder
# goes too: ``python -c`` puts it first on sys.path, and run from this tree's root, its voice would win.
WITHOUT_EDITABLE_FINDER = """
import os, runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__name__", "").startswith("_Editable")]
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_against(tree: Path, script: str, argv: list[str]) -> dict[str, Any]:
    """``script`` with ``argv`` (without --against) on ``tree``'s voice package; its printed JSON."""
    if not (tree / "voice" / "__init__.py").is_file():
        raise SystemExit(f"--against {tree}: no voice package there")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    print(f"running {Path(script).name} against {tree} first...", file=sys.stderr, flush=True)
    command = [sys.executable, "-c", WITHOUT_EDITABLE_FINDER, script, *argv]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def without_against(argv: list[str]) -> list[str]:
    """``argv`` with its ``--against DIR`` (or ``--against=DIR``) taken out."""
    return without_option(argv, "--against")


def without_option(argv: list[str], option: str) -> list[str]:
    """``argv`` with ``option VALUE`` (or ``option=VALUE``) taken out."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(f"{option}="):
            out.append(arg)
    return out
