"""Where the user's words go on a real sound path: whisper on each user WAV alone, on it with the television
added, on the raw mic and on what the echo canceller passed on (the engine's ears), by the WAV's own text.

Reads a folder written by ``device_soak.py --true-reaction --keep-audio DIR`` (mic.wav, cleaned.wav,
reference.wav on the mic clock, the user's WAVs and played.json). Each WAV is found in the mic by correlation
near where it was played; its speech span is then transcribed four ways:

- ``alone``: the WAV as written (what the user said, as whisper hears it in the quiet);
- ``with_television``: the WAV plus the canceller's output just before it was played (the television as the
  loop passed it on, at its level there, and no user yet): a second voice and nothing else;
- ``raw_mic``: the mic over that span (the loop: the user, the television and any reply's echo);
- ``cleaned``: what the echo canceller passed on over that span, which is what the engine transcribes.

So the word error of ``with_television`` against ``alone`` is what the second voice costs whisper, and
``cleaned`` against ``with_television`` what the loop and the canceller cost on top. Word error is against
each WAV's own text, grouped by whether a reply was playing (``reference`` not silent) when it was said and
whether the television was on yet.
``--model`` and ``--beam`` decode the same spans with another whisper (a models.txt name or a folder) or
beam size, side by side, with what each took to decode the canceller's output over a span (``decode_ms``,
whisper's threads as ``voice`` sets them). Issue 47: the user's words over a television on the real loop.

Usage: python benchmarks/loop_words.py --keep-audio DIR [--model NAME ...] [--beam N ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.harness import common_options, print_json, spread, with_load
from common.mic_echo import found_in_mic
from common.word_error import wer

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav
from voice.errors import VoiceError
from voice.models.resolve import asr_model

REPLY_PLAYING_DB = -50.0  # the reference over the span louder than this: the user spoke over a reply
WAYS = ("alone", "with_television", "raw_mic", "cleaned")


def level_db(samples: Samples) -> float:
    return float(10.0 * np.log10(np.mean(np.square(samples, dtype=np.float64)) + 1e-12))


def spans(folder: Path) -> list[dict[str, Any]]:
    """Each WAV played with a text, found in the mic: its audio four ways and whether a reply was playing."""
    mic = read_wav(folder / "mic.wav").samples
    cleaned = read_wav(folder / "cleaned.wav").samples
    reference = read_wav(folder / "reference.wav").samples
    kept = json.loads((folder / "played.json").read_text(encoding="utf-8"))
    television_from = kept["television_from"]
    out = []
    for play in kept["played"]:
        if not play.get("text"):
            continue
        wav = read_wav(folder / "user" / play["wav"]).samples
        where = found_in_mic(mic, wav, play["clock"])
        if where is None:
            continue
        at, match = where
        span = slice(at, at + len(wav))
        before = cleaned[max(0, at - len(wav)) : at]
        television = np.zeros_like(wav) if len(before) < len(wav) else before
        out.append(
            {
                "wav": play["wav"],
                "text": play["text"],
                "at_s": round(at / ENGINE_RATE, 2),
                "match": round(match, 2),
                "over_reply": level_db(reference[span]) > REPLY_PLAYING_DB,
                "television": television_from is not None and at >= television_from,
                "audio": {
                    "alone": wav,
                    "with_television": (wav + television).astype(np.float32),
                    "raw_mic": mic[span],
                    "cleaned": cleaned[span],
                },
            }
        )
    return out


def word_errors(played: list[dict[str, Any]], transcriber: WhisperTranscriber) -> dict[str, Any]:
    rows, took_ms = [], []
    for entry in played:
        heard = {}
        for way in WAYS:
            started = time.perf_counter()
            heard[way] = transcriber.transcribe(AudioBlock(entry["audio"][way], ENGINE_RATE)).text
            if way == "cleaned":  # what the engine decodes: the cost of a decoder on a turn
                took_ms.append((time.perf_counter() - started) * 1000.0)
        errors = {way: round(wer(entry["text"], text), 3) for way, text in heard.items()}
        facts = {k: entry[k] for k in ("wav", "at_s", "match", "over_reply", "television")}
        rows.append(facts | {"wer": errors, "heard": heard})
    summary = {}
    groups = {
        "over_a_reply_with_the_television": (True, True),
        "in_the_quiet_with_the_television": (False, True),
        "over_a_reply_before_it": (True, False),
        "in_the_quiet_before_it": (False, False),
    }
    for group, (over, television) in groups.items():
        chosen = [row for row in rows if (row["over_reply"], row["television"]) == (over, television)]
        summary[group] = {"n": len(chosen)} | {
            way: round(float(np.mean([row["wer"][way] for row in chosen])), 3) if chosen else None
            for way in WAYS
        }
    return {"word_error": summary, "decode_ms": spread(took_ms), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--keep-audio",
        type=Path,
        required=True,
        metavar="DIR",
        help="the folder device_soak.py --keep-audio wrote",
    )
    parser.add_argument(
        "--model", nargs="+", default=[None], help="whisper models (default: the bundled tiny.en)"
    )
    parser.add_argument(
        "--beam", nargs="+", type=int, default=[1], help="beam sizes (default 1, as voice runs)"
    )
    common_options(parser, against=False)
    args = parser.parse_args()
    if not (args.keep_audio / "played.json").is_file():
        raise SystemExit(
            f"{args.keep_audio}: no played.json (device_soak.py --true-reaction --keep-audio DIR writes it)"
        )
    try:
        played = spans(args.keep_audio)
    # another tool's folder, or an older played.json: said in one line
    except (VoiceError, OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(
            f"{args.keep_audio}: not what device_soak.py --keep-audio writes ({exc!r})"
        ) from None

    def measure() -> dict[str, Any]:
        ways: dict[str, Any] = {}
        for model in args.model:
            for beam in args.beam:
                transcriber = WhisperTranscriber(WhisperSettings(model=asr_model(model), beam_size=beam))
                ways[f"{model or 'tiny.en'}, beam {beam}"] = word_errors(played, transcriber)
        return {"folder": str(args.keep_audio), "played": len(played), "by_decoder": ways}

    print_json(with_load(measure), args.out)


if __name__ == "__main__":
    main()
