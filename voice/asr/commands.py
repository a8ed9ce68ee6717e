"""`voice transcribe FILE.wav`: print what is said in a recording."""

from __future__ import annotations

import argparse
from typing import Any

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.wav import read_wav


def register(subparsers: Any) -> None:
    transcribe = subparsers.add_parser("transcribe", help="print the text spoken in a WAV file")
    transcribe.add_argument("file", help="a WAV file (any rate, channel count or sample format)")
    transcribe.add_argument(
        "--model", help="a faster-whisper model directory or cached size name (default: the bundled tiny.en)"
    )
    transcribe.add_argument(
        "--beam-size", type=int, default=WhisperSettings.beam_size, help="beam search width"
    )
    transcribe.add_argument(
        "--language", default=WhisperSettings.language, help="language code (default: en)"
    )
    transcribe.set_defaults(run=_transcribe)


def _transcribe(args: argparse.Namespace) -> int:
    audio = read_wav(args.file)
    settings = WhisperSettings(model=args.model, beam_size=args.beam_size, language=args.language)
    print(WhisperTranscriber(settings).transcribe(audio).text)
    return 0
