"""`voice say "text" --out FILE.wav`: speak text into a WAV file, optionally listing where each word is."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voice.audio.block import ENGINE_RATE
from voice.audio.wav import write_wav
from voice.errors import ConfigError
from voice.tts.piper_voice import PiperSettings, PiperSynthesizer


def register(subparsers: Any) -> None:
    say = subparsers.add_parser("say", help="speak text into a WAV file with the piper voice")
    say.add_argument("text", help="what to say")
    say.add_argument("--out", required=True, help="the WAV file to write (16 kHz mono)")
    say.add_argument("--voice", type=Path, help="a piper .onnx voice (default: the bundled en_US-joe-medium)")
    say.add_argument(
        "--length-scale", type=float, help="speaking pace: above 1 is slower (default: the voice's)"
    )
    say.add_argument("--words", action="store_true", help="print each word's start and end in seconds")
    say.set_defaults(run=_say)


def _say(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise ConfigError("nothing to say: the text is empty")
    synthesis = PiperSynthesizer(PiperSettings(model=args.voice, length_scale=args.length_scale)).synthesize(
        args.text
    )
    write_wav(args.out, synthesis.audio)
    if args.words:
        for word in synthesis.words:
            print(f"{word.start / ENGINE_RATE:7.3f} {word.end / ENGINE_RATE:7.3f} {word.text}")
    return 0
