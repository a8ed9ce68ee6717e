"""The `voice` command: one subcommand per job (or family of jobs), each registered by its module here."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from voice.allocator import keep_malloc_flat
from voice.errors import VoiceError

# Each module defines ``register(subparsers)`` adding its subcommands with ``set_defaults(run=...)``.
COMMAND_MODULES = (
    "voice.cli.log",
    "voice.cli.devices",
    "voice.cli.transcribe",
    "voice.cli.say",
    "voice.cli.ask",
    "voice.cli.simulate",
    "voice.cli.demo",
    "voice.cli.test",
    "voice.cli.chat",
    "voice.cli.kiosk",
    "voice.cli.config",
    "voice.cli.models",
    "voice.cli.status",
    "voice.cli.doctor",
)


Runner = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="voice", description="A local voice assistant you can talk over.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    keep_malloc_flat()  # before any model or worker thread allocates
    run: Runner = args.run
    try:
        return run(args)
    except VoiceError as exc:
        print(f"voice: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
