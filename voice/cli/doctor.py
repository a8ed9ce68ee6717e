"""`voice doctor`: this machine's CPU, what whisper, Smart Turn and the voice cost on it, and what turn-taking
can be on it."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from voice.config.flags import add_speech_arguments, add_turn_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.errors import VoiceError


def register(subparsers: Any) -> None:
    doctor = subparsers.add_parser(
        "doctor",
        help="this machine's CPU, what whisper, Smart Turn and the voice cost on it, and what to expect of "
        "each eagerness",
    )
    add_config_argument(doctor)
    add_speech_arguments(doctor)
    add_turn_arguments(doctor)
    doctor.add_argument("--rounds", type=int, default=5, help="timed rounds of each model (default 5)")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(run=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    from voice.components import load_speech_models  # the models load only for this command
    from voice.telemetry.doctor import load_average, measure
    from voice.telemetry.doctor_report import doctor_report, report_lines
    from voice.telemetry.expected_turns import expected
    from voice.telemetry.machine import this_cpu

    if args.rounds < 1:
        raise VoiceError(f"--rounds must be at least 1, got {args.rounds}")
    settings = load_settings(args, os.environ)
    cpu = this_cpu()
    if not args.json:
        print(f"CPU: {cpu.line()}\nloading whisper, Smart Turn and piper, then timing them...", flush=True)
    measured = measure(load_speech_models(settings.speech), settings, args.rounds)
    speech = {
        "asr": measured.costs.asr,
        "tts": settings.tts_url or settings.tts_voice or "en_US-joe-medium (bundled)",
    }
    report = doctor_report(
        cpu, load_average(), speech, measured, expected(measured.costs), settings.eagerness.value
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("\n".join(report_lines(report)[1:]))  # the CPU's line was printed before the models loaded
    return 0
