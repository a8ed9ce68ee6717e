"""`voice transcribe FILE.wav`: print what is said in a recording."""

from __future__ import annotations

import argparse
from typing import Any

from voice.asr.guard import guarded
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.wav import read_wav
from voice.models import resolve


def register(subparsers: Any) -> None:
    transcribe = subparsers.add_parser("transcribe", help="print the text spoken in a WAV file")
    transcribe.add_argument("file", help="a WAV file (any rate, channel count or sample format)")
    transcribe.add_argument(
        "--model",
        help="a models.txt name (whisper-base), a model directory or a cached size name (default: tiny.en)",
    )
    transcribe.add_argument(
        "--beam-size", type=int, default=WhisperSettings.beam_size, help="beam search width"
    )
    transcribe.add_argument(
        "--language",
        default=WhisperSettings.language,
        help="language code, or auto to detect it with a multilingual model (default: en)",
    )
    transcribe.set_defaults(run=_transcribe)


def _transcribe(args: argparse.Namespace) -> int:
    audio = read_wav(args.file)
    model = resolve.asr_model(args.model)
    language = None if args.language == "auto" else args.language
    settings = WhisperSettings(model=model, beam_size=args.beam_size, language=language)
    print(guarded(WhisperTranscriber(settings)).transcribe(audio).text)
    return 0
