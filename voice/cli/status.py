"""`voice status`: the health of a running kiosk, or of `voice chat --metrics-port N`."""

from __future__ import annotations

import argparse
import os
from typing import Any

import httpx

from voice.config.kiosk import TOKEN_ENV
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
