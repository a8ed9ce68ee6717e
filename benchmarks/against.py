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


def run_against(tree: Path, script: str, argv: list[str]) -> dict[str, Any]:
    """``script`` with ``argv`` (without --against) on ``tree``'s voice package; its printed JSON."""
    if not (tree / "voice" / "__init__.py").is_file():
        raise SystemExit(f"--against {tree}: no voice package there")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    print(f"running {Path(script).name} against {tree} first...", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, script, *argv], env=env, stdout=subprocess.PIPE, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def without_against(argv: list[str]) -> list[str]:
    """``argv`` with its ``--against DIR`` (or ``--against=DIR``) taken out."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--against":
            skip = True
        elif not arg.startswith("--against="):
            out.append(arg)
    return out
