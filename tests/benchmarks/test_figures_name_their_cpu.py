"""Every benchmark's JSON names the CPU its figures came from (issue 46): the model, the instruction sets
that change which kernels run, and the load average, through benchmarks/common/machine.py."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from tests.support.benchmark_modules import BENCHMARKS, benchmark_module
from voice.telemetry.machine import this_cpu

machine: Any = benchmark_module("common.machine")
HELPERS = {"with_cpu", "cpu_facts"}


def called(path: Path) -> dict[str, set[str]]:
    """The names each top-level function of ``path`` calls (module level under "")."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        owner = node.name if isinstance(node, ast.FunctionDef) else ""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                calls.setdefault(owner, set()).add(inner.func.id)
    return calls


def printers_naming_the_cpu() -> set[str]:
    """The shared printers of benchmarks/common/ that put the CPU into what they print, themselves or
    through another such printer (the harness's ``print_measured`` prints through ``print_json``)."""
    functions = {
        function: names
        for path in sorted((BENCHMARKS / "common").glob("*.py"))
        for function, names in called(path).items()
        if function
    }
    naming: set[str] = set()
    while True:
        more = {function for function, names in functions.items() if names & (HELPERS | naming)}
        if more <= naming:
            return naming
        naming |= more


@pytest.mark.parametrize("script", sorted(path.name for path in BENCHMARKS.glob("*.py")))
def test_every_benchmark_script_puts_the_cpu_into_its_json(script: str) -> None:
    uses = set().union(*called(BENCHMARKS / script).values())
    assert uses & (HELPERS | printers_naming_the_cpu()), (
        f"benchmarks/{script} prints figures without their CPU: wrap its JSON in common.machine.with_cpu"
    )


def test_the_shared_printers_are_counted_only_because_they_name_it() -> None:
    assert {
        "print_figures",
        "print_json",
        "print_measured",
    } <= printers_naming_the_cpu()
    assert "spread" not in printers_naming_the_cpu()


def test_the_cpu_entry_holds_the_model_its_instruction_sets_and_the_load() -> None:
    cpu = this_cpu()
    named = machine.with_cpu({"median_ms": 120})
    assert list(named) == ["median_ms", "cpu"]
    assert named["cpu"]["model"] == cpu.model
    assert named["cpu"]["sets"] == cpu.sets
    assert len(named["cpu"]["load_average_1_5_15"]) == 3


WIDE = {"avx2": True, "fma": True, "f16c": True, "avx512f": True, "avx512_vnni": True}


def test_figures_taken_under_an_emulator_name_the_cpu_the_program_was_shown() -> None:
    """Under qemu /proc/cpuinfo describes the host; the sets cpuid showed the program chose its kernels."""
    narrow = {**WIDE, "avx512f": False, "avx512_vnni": False}

    assert machine.emulated(WIDE, narrow, "AMD EPYC-Rome") == {"cpu": "AMD EPYC-Rome", "sets": narrow}
    assert machine.emulated(WIDE, narrow, None) == {"cpu": None, "sets": narrow}


def test_an_emulated_arm_core_is_named_with_the_sets_its_cpuinfo_gives() -> None:
    arm = {"neon": True, "dotprod": False, "i8mm": False}

    assert machine.emulated(arm, None, "ARM cortex-a72") == {"cpu": "ARM cortex-a72", "sets": arm}


def test_figures_taken_natively_say_nothing_of_an_emulator() -> None:
    assert machine.emulated(WIDE, dict(WIDE), None) is None
