"""The machine a benchmark's figures came from: every script's JSON names its CPU (issue 46).

Models run 3 to 5 times slower on an AVX2-only CPU than on an AVX-512/VNNI/AMX Xeon, and int8 kernels can
even decide differently, so a figure without its CPU cannot be compared. ``with_cpu`` adds a ``cpu`` entry:
the model name, the instruction sets that matter (voice/telemetry/machine.py) and the load average when the
figures were printed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

# Loaded from this tree by its path: a run ``--against`` an older tree imports that tree's voice package,
# which may have no machine module, while the CPU is this machine's either way (the module is stdlib only).
_MACHINE = Path(__file__).resolve().parents[2] / "voice" / "telemetry" / "machine.py"


def _this_cpu() -> Any:
    spec = importlib.util.spec_from_file_location("_benchmark_machine", _MACHINE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{_MACHINE} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module.this_cpu()


def cpu_facts() -> dict[str, Any]:
    """This CPU's model, architecture, cores and instruction sets, and the 1, 5 and 15 minute load."""
    cpu = _this_cpu()
    return cpu.as_json() | {"load_average_1_5_15": [round(load, 2) for load in os.getloadavg()]}


def with_cpu(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the machine it was measured on as its last entry, ``cpu``."""
    return {**result, "cpu": cpu_facts()}
