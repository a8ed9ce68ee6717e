"""`voice status`: the health of a running kiosk, or of `voice chat --metrics-port N`; `voice doctor`: this
machine's CPU and what turn-taking can be on it."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import httpx

from voice.config.flags import add_speech_arguments, add_turn_arguments
from voice.config.kiosk import TOKEN_ENV
from voice.config.settings import add_config_argument, load_settings
from voice.errors import VoiceError

DEFAULT_PORT = 8765  # the kiosk's
TIMEOUT_S = 10.0  # the health check itself waits up to seconds for the LLM's answer


def register(subparsers: Any) -> None:
    status = subparsers.add_parser(
        "status",
        help="is a running kiosk (or chat with --metrics-port) answering? its /healthz, one line a check",
    )
    status.add_argument("--host", default="127.0.0.1", help="where it runs (default 127.0.0.1)")
    status.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the kiosk's port or chat's --metrics-port (default {DEFAULT_PORT})",
    )
    status.set_defaults(run=_status)
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


def _status(args: argparse.Namespace) -> int:
    url = f"http://{args.host}:{args.port}/healthz"
    token = os.environ.get(TOKEN_ENV)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(url, headers=headers, timeout=TIMEOUT_S, trust_env=False)
    except httpx.HTTPError as exc:
        raise VoiceError(f"nothing answers at {url} ({type(exc).__name__}): is it running?") from exc
    if response.status_code == 401:
        raise VoiceError(f"{url} wants a token: set {TOKEN_ENV}")
    try:
        report = response.json()
        checks: dict[str, str] = report["checks"]
    except (ValueError, KeyError, TypeError) as exc:
        raise VoiceError(f"{url} answered {response.status_code} without a health report") from exc
    print(f"{url}: {report.get('status', '?')}")
    for name, state in checks.items():
        print(f"  {name}: {state}")
    return 0 if response.status_code == 200 else 1


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
