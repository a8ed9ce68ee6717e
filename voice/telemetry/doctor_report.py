"""What `voice doctor` reports: one dict for ``--json`` and the plain lines made from it (pure)."""

from __future__ import annotations

from typing import Any

from voice.engine.hold import START_MS
from voice.telemetry.doctor import Measured
from voice.telemetry.expected_turns import LONG_SILENCE_MS, Expected, as_json
from voice.telemetry.machine import Cpu

QUESTION = "What will the weather be like tomorrow?"  # the words of doctor.QUESTION_WAV


def doctor_report(
    cpu: Cpu,
    load: list[float] | None,
    speech: dict[str, str],
    measured: Measured,
    figures: dict[str, Expected],
    eagerness: str,
) -> dict[str, Any]:
    """Everything `voice doctor` found; ``speech`` names what hears and speaks (``asr``, ``tts``)."""
    warnings = [f"{name}: {f.warning}" for name, f in figures.items() if f.warning is not None]
    return {
        "cpu": cpu.as_json() | {"line": cpu.line()},
        "load_average_1_5_15": load,
        "speech": speech,
        "measured": measured.as_json(),
        "eagerness": as_json(figures),
        "configured_eagerness": eagerness,
        "warnings": warnings,
    }


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as a user reads it."""
    measured, speech = report["measured"], report["speech"]
    load = report["load_average_1_5_15"]
    lines = [f"CPU: {report['cpu']['line']}"]
    if load is not None:
        loads = " ".join(str(x) for x in load)
        busy = ": more work than the cores can run, so voice gets less of them than on a quiet machine"
        lines.append(
            f"load average: {loads}" + (busy if load[0] >= report["cpu"]["cores"] else " (rough figures)")
        )
    lines += [
        "",
        f"measured here (median of {measured['rounds']}; the question {QUESTION!r}):",
        f"  whisper ({speech['asr']}): {measured['whisper_ms']} ms, heard {measured['heard']!r}",
        f"  Smart Turn: {measured['smart_turn_ms']} ms, {measured['smart_turn_probability']:.2f} complete",
        f"  both asked at once, as at a pause: whisper {measured['whisper_beside_smart_turn_ms']} ms, "
        f"both {measured['decision_ms']} ms",
        f"  first audio of a reply ({speech['tts']}): {measured['first_audio_ms']} ms for "
        f"{measured['first_chunk']!r}",
        "",
        "after your last word, plus your LLM's time to its first words:",
        f"  {'eagerness':<10} {'ends at the pause':<18} {'LLM asked':>10} {'first audio':>12}",
    ]
    for name, figures in report["eagerness"].items():
        mark = "  <- yours" if name == report["configured_eagerness"] else ""
        early = "yes" if figures["ends_early"] else "no"
        lines.append(
            f"  {name:<10} {early:<18} {figures['request_ms']:>7} ms {figures['first_audio_ms']:>9} ms{mark}"
        )
    lines.append(
        f"  (a turn not ended at the pause ends after {LONG_SILENCE_MS} ms of silence; auto's hold starts at "
        f"{START_MS} ms and adapts to you)"
    )
    warnings = report["warnings"]
    lines += [
        "",
        "warnings:" if warnings else "no warnings: every eagerness is as quick here as it means to be",
    ]
    lines += [f"  {warning}" for warning in warnings]
    return lines
