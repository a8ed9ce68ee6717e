"""`voice say "text" --out FILE.wav`: speak text into a WAV file with the configured voice, optionally
listing where each word is (piper's alignments, or the estimate for a voice that gives none)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from voice.audio.block import ENGINE_RATE
from voice.audio.wav import write_wav
from voice.config.flags import add_voice_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.errors import ConfigError
from voice.speech_backends import opened, prepare_synthesizer


def register(subparsers: Any) -> None:
    say = subparsers.add_parser(
        "say", help="speak text into a WAV file with the configured voice (piper, or a speech server)"
    )
    say.add_argument("text", help="what to say")
    say.add_argument("--out", required=True, help="the WAV file to write (16 kHz mono)")
    add_config_argument(say)
    add_voice_arguments(say)
    say.add_argument(
        "--length-scale", type=float, help="piper's speaking pace: above 1 is slower (default: the voice's)"
    )
    say.add_argument("--words", action="store_true", help="print each word's start and end in seconds")
    say.set_defaults(run=_say)


def _say(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise ConfigError("nothing to say: the text is empty")
    settings = load_settings(args, os.environ)
    tuning = {"length_scale": args.length_scale} if args.length_scale is not None else {}
    with opened(prepare_synthesizer(settings.speech, tuning=tuning)) as voice:
        synthesis = voice.synthesize(args.text)
    write_wav(args.out, synthesis.audio)
    if args.words:
        for word in synthesis.words:
            print(f"{word.start / ENGINE_RATE:7.3f} {word.end / ENGINE_RATE:7.3f} {word.text}")
    return 0
