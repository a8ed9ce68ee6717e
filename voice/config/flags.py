"""The flags over the config file, shared by the commands that run the assistant and `voice config show`.

Every default is None, so a flag that was not given leaves the file's or the environment's value standing.
"""

from __future__ import annotations

import argparse
from typing import Any

from voice.config.keys import BY_NAME
from voice.config.kiosk import AUDIO_MODES
from voice.engine.hold import EAGERNESS


def _add(group: Any, name: str, **kwargs: Any) -> None:
    key = BY_NAME[name]
    shown = str(key.default).lower() if isinstance(key.default, bool) else key.default
    default = f"; default {shown}" if key.default not in (None, ()) else ""
    group.add_argument(
        key.flag, dest=key.dest, default=None, help=f"{key.help} (config {key.name}{default})", **kwargs
    )


def add_speech_arguments(parser: argparse.ArgumentParser) -> None:
    """``--asr-model`` and ``--tts-voice``: which model hears and which voice speaks here; ``--asr`` and
    ``--tts``: a speech server that does it instead (voice/speech_backends.py)."""
    add_hearing_arguments(parser)
    add_voice_arguments(parser)


def add_hearing_arguments(parser: argparse.ArgumentParser) -> None:
    """``--asr-model`` and ``--asr``: what hears the user."""
    group = parser.add_argument_group("speech recognition")
    _add(group, "asr.model", metavar="NAME|DIR")
    _add(group, "asr.url", metavar="URL")


def add_voice_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tts-voice`` and ``--tts``: what speaks the replies."""
    group = parser.add_argument_group("voice")
    _add(group, "tts.voice", metavar="NAME|FILE")
    _add(group, "tts.url", metavar="URL")


def add_turn_arguments(parser: argparse.ArgumentParser) -> None:
    """``--eagerness``: how soon a turn that sounds finished at a short pause is answered."""
    group = parser.add_argument_group("turn-taking")
    _add(group, "turn.eagerness", choices=EAGERNESS)


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """The microphone, the speaker and echo cancellation."""
    group = parser.add_argument_group("sound devices")
    _add(group, "audio.input_device", metavar="DEVICE")
    _add(group, "audio.output_device", metavar="DEVICE")
    _add(group, "audio.echo_cancel", action=argparse.BooleanOptionalAction)


def add_kiosk_arguments(parser: argparse.ArgumentParser) -> None:
    """Where `voice kiosk` listens, whose pages may connect, and how it keeps its sessions."""
    group = parser.add_argument_group("kiosk")
    _add(group, "kiosk.host", metavar="ADDRESS")
    _add(group, "kiosk.port", type=int, metavar="PORT")
    _add(group, "kiosk.audio", choices=AUDIO_MODES)
    _add(group, "kiosk.allow_origins", action="append", metavar="ORIGIN")
    _add(group, "kiosk.fresh_after_s", type=float, metavar="SECONDS")
    _add(group, "kiosk.wake", metavar="PHRASE")
    _add(group, "kiosk.sessions", metavar="FOLDER")
    _add(group, "kiosk.keep_sessions", type=int, metavar="N")


def add_wake_arguments(parser: argparse.ArgumentParser) -> None:
    """``--wake-word``: sleep until a wake word model hears it; ``--awake-for``: how long it stays up."""
    group = parser.add_argument_group("wake word")
    _add(group, "wake.word", metavar="NAME|FILE")
    _add(group, "wake.awake_s", type=float, metavar="SECONDS")


def add_telemetry_arguments(parser: argparse.ArgumentParser) -> None:
    """``--metrics-port``: where `voice chat` serves its metrics and health (the kiosk uses its own port)."""
    group = parser.add_argument_group("telemetry")
    _add(group, "telemetry.metrics_port", type=int, metavar="PORT")
