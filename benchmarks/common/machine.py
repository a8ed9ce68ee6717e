"""The machine a benchmark's figures came from: every script's JSON names its CPU (issue 46).

Models run 3 to 5 times slower on an AVX2-only CPU than on an AVX-512/VNNI/AMX Xeon, and int8 kernels can
even decide differently, so a figure without its CPU cannot be compared. ``with_cpu`` adds a ``cpu`` entry:
the model name, the instruction sets that matter (voice/telemetry/machine.py) and the load average when the
figures were printed. Under qemu's emulator (scripts/as-avx2-only) /proc/cpuinfo still describes the host, so
``emulated`` then gives the CPU the process was shown.
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


# numpy's names, from the cpuid instruction, for voice/telemetry/machine.py's X86_SETS.
_NUMPY_SETS = {
    "avx2": "AVX2",
    "fma": "FMA3",
    "f16c": "F16C",
    "avx512f": "AVX512F",
    "avx512_vnni": "AVX512VNNI",
}


def _sets_shown() -> dict[str, bool] | None:
    """The x86 sets cpuid shows this process (an emulator's, not the host's), where numpy can read them."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        return None
    if not features.get("SSE2"):
        return None
    return {name: bool(features.get(key)) for name, key in _NUMPY_SETS.items()}


def emulated(
    host_sets: dict[str, bool] | None, shown: dict[str, bool] | None, named: str | None
) -> dict[str, Any] | None:
    """What an emulator showed the program: the CPU it was told (``named``), and the sets cpuid showed where
    they differ from the host's /proc/cpuinfo ones; None when nothing says it was emulated."""
    differs = shown is not None and bool(host_sets) and any(host_sets.get(k) != v for k, v in shown.items())
    if not named and not differs:
        return None
    return {"cpu": named, "sets": shown if differs else host_sets}


def cpu_facts() -> dict[str, Any]:
    """This CPU's model, architecture, cores and instruction sets, and the 1, 5 and 15 minute load; under an
    emulator (scripts/as-avx2-only, scripts/as-arm64) ``emulated``: the CPU and sets the program was shown."""
    cpu = _this_cpu()
    facts = cpu.as_json() | {"load_average_1_5_15": [round(load, 2) for load in os.getloadavg()]}
    named = os.environ.get("VOICE_EMULATED_CPU") or os.environ.get("QEMU_CPU")
    shown = emulated(cpu.sets, _sets_shown(), named)
    return facts if shown is None else facts | {"emulated": shown}


def with_cpu(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the machine it was measured on as its last entry, ``cpu``."""
    return {**result, "cpu": cpu_facts()}
