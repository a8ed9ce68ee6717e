"""The processor read from /proc/cpuinfo, on texts recorded in the formats of an AVX2-only AMD EPYC, an Intel
Sapphire Rapids Xeon and two ARM64 machines (a Raspberry Pi 5 and an AWS Graviton3)."""

from __future__ import annotations

from pathlib import Path

from voice.telemetry.machine import Cpu, parse_cpuinfo, this_cpu

CPUINFO = Path(__file__).parent / "cpuinfo"


def read(name: str, arch: str = "x86_64") -> Cpu:
    return parse_cpuinfo((CPUINFO / name).read_text(encoding="utf-8"), arch)


def test_an_amd_epyc_has_avx2_and_fma_and_nothing_wider() -> None:
    cpu = read("amd-epyc-7b13.txt")
    assert (cpu.model, cpu.arch, cpu.cores) == ("AMD EPYC 7B13", "x86_64", 4)
    assert cpu.present == ["avx2", "fma", "f16c"]
    assert cpu.absent == ["avx512f", "avx512_vnni", "avx_vnni", "amx_int8"]
    assert cpu.line() == (
        "AMD EPYC 7B13, x86_64, 4 cores: avx2 fma f16c (no avx512f avx512_vnni avx_vnni amx_int8)"
    )


def test_a_sapphire_rapids_xeon_has_avx512_vnni_and_amx() -> None:
    cpu = read("intel-xeon-sapphire-rapids.txt")
    assert cpu.model == "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz"
    assert cpu.absent == []
    assert cpu.has("amx_int8")
    assert cpu.has("avx_vnni")
    assert cpu.as_json()["sets"] == dict.fromkeys(
        ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"), True
    )


def test_a_raspberry_pi_5_is_named_by_its_core_and_board_with_neon_and_dotprod_but_no_i8mm() -> None:
    cpu = read("raspberry-pi-5.txt", "aarch64")
    assert (cpu.model, cpu.cores) == ("ARM Cortex-A76 (Raspberry Pi 5 Model B Rev 1.0)", 4)
    assert cpu.sets == {"neon": True, "dotprod": True, "i8mm": False}
    assert not cpu.has("avx2")  # x86's names are not asked of an ARM CPU


def test_a_graviton3_without_a_model_line_is_named_by_its_core_and_has_i8mm() -> None:
    cpu = read("aws-graviton3.txt", "aarch64")
    assert (cpu.model, cpu.cores) == ("ARM Neoverse V1", 2)
    assert cpu.present == ["neon", "dotprod", "i8mm"]


def test_an_empty_or_foreign_cpuinfo_still_gives_one_core_and_says_what_it_lacks() -> None:
    cpu = parse_cpuinfo("", "x86_64")
    assert (cpu.model, cpu.cores) == ("unknown CPU", 1)
    assert (
        cpu.line()
        == "unknown CPU, x86_64, 1 core: none of avx2 fma f16c avx512f avx512_vnni avx_vnni amx_int8"
    )
    arm = parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd\n", "arm64")
    assert (arm.model, arm.present) == ("unknown ARM64 CPU", ["neon"])


def test_this_machine_names_a_cpu_with_at_least_one_core() -> None:
    cpu = this_cpu()
    assert cpu.model
    assert cpu.cores >= 1
    assert cpu.line().startswith(cpu.model)
