"""`voice log show FILE`."""

from __future__ import annotations

import argparse
from typing import Any

from voice.conversation.log_view import render_session
from voice.conversation.session_log import load_session


def register(subparsers: Any) -> None:
    log = subparsers.add_parser("log", help="read session logs")
    actions = log.add_subparsers(dest="log_command", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="print a session readably")
    show.add_argument("file", help="a session .jsonl log")
    show.set_defaults(run=_show)


def _show(args: argparse.Namespace) -> int:
    print(render_session(load_session(args.file)))
    return 0
