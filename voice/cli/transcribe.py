"""`voice transcribe FILE.wav`: print what the configured recogniser hears in a recording."""

from __future__ import annotations

import argparse
import os
from typing import Any

from voice.asr.guard import guarded
from voice.audio.wav import read_wav
from voice.config.flags import add_hearing_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.speech_backends import opened, prepare_transcriber


def register(subparsers: Any) -> None:
    transcribe = subparsers.add_parser(
        "transcribe", help="print the text spoken in a WAV file (whisper, or a speech server)"
    )
    transcribe.add_argument("file", help="a WAV file (any rate, channel count or sample format)")
    add_config_argument(transcribe)
    add_hearing_arguments(transcribe)
    transcribe.add_argument(
        "--beam-size", type=int, help="the beam choosing a short utterance's words (default: 5)"
    )
    transcribe.add_argument(
        "--language",
        help="whisper's language code, or auto to detect it with a multilingual model (default: en)",
    )
    transcribe.set_defaults(run=_transcribe)


def _transcribe(args: argparse.Namespace) -> int:
    audio = read_wav(args.file)
    settings = load_settings(args, os.environ)
    tuning: dict[str, Any] = {}
    if args.beam_size is not None:
        tuning["beam_size"] = args.beam_size
    if args.language is not None:
        tuning["language"] = None if args.language == "auto" else args.language
    with opened(prepare_transcriber(settings.speech, tuning=tuning)) as transcriber:
        print(guarded(transcriber).transcribe(audio).text)
    return 0
