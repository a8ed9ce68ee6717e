"""The processor `voice` runs on: model, architecture, cores and the instruction sets its models' kernels use.

Whisper (CTranslate2), Smart Turn and Silero (onnxruntime) and piper pick their kernels by these sets, so
speed, and for int8 kernels the very numbers, differ between an AVX2-only laptop, an AVX-512/VNNI/AMX server
and an ARM64 board (issue 46). Read from /proc/cpuinfo on Linux (``parse_cpuinfo``, pure); elsewhere only
what the ``platform`` module says, with the instruction sets unknown.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")
# The sets that change which kernels run, by the names /proc/cpuinfo gives them.
X86_SETS = ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
# ARM64's: our name, then its name in /proc/cpuinfo's Features.
ARM_SETS = {"neon": "asimd", "dotprod": "asimddp", "i8mm": "i8mm"}
# ARM's cores by (implementer, part), for machines whose cpuinfo names no model.
ARM_PARTS = {
    ("0x41", "0xd03"): "ARM Cortex-A53",
    ("0x41", "0xd04"): "ARM Cortex-A35",
    ("0x41", "0xd05"): "ARM Cortex-A55",
    ("0x41", "0xd08"): "ARM Cortex-A72",
    ("0x41", "0xd0b"): "ARM Cortex-A76",
    ("0x41", "0xd0c"): "ARM Neoverse N1",
    ("0x41", "0xd0d"): "ARM Cortex-A77",
    ("0x41", "0xd40"): "ARM Neoverse V1",
    ("0x41", "0xd41"): "ARM Cortex-A78",
    ("0x41", "0xd49"): "ARM Neoverse N2",
    ("0x41", "0xd4f"): "ARM Neoverse V2",
}


@dataclass(frozen=True)
class Cpu:
    """One machine's processor as `voice` sees it.

    ``sets`` maps each instruction set that matters on ``arch`` to whether the CPU has it; None when they
    could not be read (not Linux).
    """

    model: str
    arch: str
    cores: int
    sets: dict[str, bool] | None

    def has(self, name: str) -> bool:
        """Whether the CPU has instruction set ``name`` (False when unknown)."""
        return bool(self.sets and self.sets.get(name))

    @property
    def present(self) -> list[str]:
        return [name for name, there in (self.sets or {}).items() if there]

    @property
    def absent(self) -> list[str]:
        return [name for name, there in (self.sets or {}).items() if not there]

    def line(self) -> str:
        """One line for a log: "AMD EPYC 7B13, x86_64, 4 cores: avx2 fma f16c (no avx512f ...)"."""
        head = f"{self.model}, {self.arch}, {self.cores} core{'' if self.cores == 1 else 's'}"
        if self.sets is None:
            return f"{head}: instruction sets unknown"
        if not self.present:
            return f"{head}: none of {' '.join(self.absent)}"
        return f"{head}: {' '.join(self.present)}" + (f" (no {' '.join(self.absent)})" if self.absent else "")

    def as_json(self) -> dict[str, Any]:
        return {"model": self.model, "arch": self.arch, "cores": self.cores, "sets": self.sets}


def parse_cpuinfo(text: str, arch: str) -> Cpu:
    """The processor /proc/cpuinfo's ``text`` describes, on a machine of architecture ``arch``
    (``platform.machine()``: x86_64, aarch64, ...)."""
    first: dict[str, str] = {}  # the first processor's fields; boards add theirs (Model) at the end
    cores = 0
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if not colon:
            continue
        key, value = key.strip(), value.strip()
        if key == "processor":
            cores += 1
        first.setdefault(key, value)
    if _is_arm(arch):
        features = set(first.get("Features", "").split())
        sets = {name: flag in features for name, flag in ARM_SETS.items()}
        core = ARM_PARTS.get((first.get("CPU implementer", ""), first.get("CPU part", "")))
        board = first.get("Model")
        model = f"{core} ({board})" if core and board else core or board or "unknown ARM64 CPU"
    else:
        flags = set(first.get("flags", "").split())
        sets = {name: name in flags for name in X86_SETS}
        model = first.get("model name", "unknown CPU")
    return Cpu(model, arch, max(cores, 1), sets)


def this_cpu() -> Cpu:
    """This machine's processor: /proc/cpuinfo where there is one, else what ``platform`` knows."""
    arch = platform.machine() or "unknown"
    try:
        return parse_cpuinfo(CPUINFO.read_text(encoding="utf-8", errors="replace"), arch)
    except OSError:
        return Cpu(platform.processor() or "unknown CPU", arch, os.cpu_count() or 1, None)


def _is_arm(arch: str) -> bool:
    return arch.lower() in {"aarch64", "arm64"} or arch.lower().startswith("armv8")
