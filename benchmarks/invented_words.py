"""What the word guard catches, and whether a caught transcript should be decoded again or dropped.

Each utterance of a set (benchmarks/cases/hearing_sets.py; ``tuning`` unless told) is heard by tiny.en as
the quiet question and as speech over the reply, with and without its context, unguarded; the guard's
rule (voice.asr.guard.why_unusable) is then applied to every transcript, and every caught one is
decoded again on whisper's full window without context, as the guard does.

- ``caught``: transcripts the rule caught, per corpus (synthesized voices, real recordings), with the
  first transcript, the second, their word error and whether the second passes;
- ``wer_caught`` / ``wer_redecoded``: mean word error of the caught transcripts, and of what the full
  window heard instead (dropping one is a word error of 1.0: nothing heard);
- ``real_wer_quick`` / ``real_wer_full``: on the real recordings, the quick path's word error against the
  full window's, all transcripts: whether the full window, the re-decode, hears real people as well.

Usage: python benchmarks/invented_words.py [--set tuning] [--every N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any

from cases.hearing_sets import hearing_set
from common.machine import with_cpu
from common.word_error import wer_said

from voice.asr.guard import voiced_seconds, why_unusable
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock


def mean(values: list[float]) -> float | None:
    return round(statistics.mean(values), 3) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="tuning")
    parser.add_argument("--every", type=int, default=1, help="of the synthesized voices, every Nth utterance")
    args = parser.parse_args()
    spoken = hearing_set(args.set)
    chosen = [s for s in spoken if s.family != "real"][:: args.every] + [
        s for s in spoken if s.family == "real"
    ]
    whisper = WhisperTranscriber(WhisperSettings())
    full = whisper.full_window()
    caught: list[dict[str, Any]] = []
    real_quick: list[float] = []
    real_full: list[float] = []
    heard_count = 0
    for index, said in enumerate(chosen):
        print(f"{index + 1}/{len(chosen)} {said.name}", file=sys.stderr, flush=True)
        audio = AudioBlock(said.samples, ENGINE_RATE)
        voiced = voiced_seconds(said.samples)
        careful: str | None = None
        for over_reply in (False, True):
            for context in dict.fromkeys(("", said.context)):  # without, then with (if it has one)
                text = whisper.transcribe(audio, over_reply=over_reply, context=context).text
                heard_count += 1
                why = why_unusable(text, voiced, context)
                if said.family == "real" and said.text and not context:
                    real_quick.append(wer_said(said.text, text))
                if why is None:
                    continue
                careful = careful if careful is not None else full.transcribe(audio).text
                caught.append(
                    {
                        "corpus": "real" if said.family == "real" else "synthesized",
                        "utterance": said.name,
                        "path": "over the reply" if over_reply else "quiet question",
                        "context": context,
                        "heard": text,
                        "why": why,
                        "redecoded": careful,
                        "redecoded_passes": why_unusable(careful, voiced) is None,
                        "wer": round(wer_said(said.text, text), 3) if said.text else None,
                        "wer_redecoded": round(wer_said(said.text, careful), 3) if said.text else None,
                    }
                )
        if said.family == "real" and said.text:
            real_full.append(wer_said(said.text, full.transcribe(audio).text))
    result = {
        "set": args.set,
        "utterances": len(chosen),
        "transcripts": heard_count,
        "caught": {
            corpus: {
                "count": sum(c["corpus"] == corpus for c in caught),
                "redecoded_passes": sum(c["corpus"] == corpus and c["redecoded_passes"] for c in caught),
                "wer_caught": mean(
                    [c["wer"] for c in caught if c["corpus"] == corpus and c["wer"] is not None]
                ),
                "wer_redecoded": mean(
                    [c["wer_redecoded"] for c in caught if c["corpus"] == corpus and c["wer"] is not None]
                ),
            }
            for corpus in ("synthesized", "real")
        },
        "real_wer_quick": mean(real_quick),
        "real_wer_full": mean(real_full),
        "cases": caught,
    }
    print(json.dumps(with_cpu(result), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
