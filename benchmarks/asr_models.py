"""The hearing table: word error and latency of every way voice hears, on speech it was and was not tuned on.

Paths, each built as the assistant builds it (behind voice.asr.guard's WordGuard where the tree has it):
- ``quiet question``: tiny.en on the cut encoder window, as a question asked in the quiet;
- ``over the reply``: the same model as for speech over the assistant's reply (``over_reply``);
- ``quiet question beam 1``: the quiet path decoding greedily, as the assistant did before its beam of 5
  (over a reply it still decodes greedily: voice.asr.short_window says why);
- ``full window``: tiny.en always on whisper's full 30 s window;
- ``whisper base``: the pulled multilingual base (``voice models pull whisper-base``), as the quiet path.

Corpora: ``fixtures`` (audio/manifest.json's speech), ``espeak SET`` and ``real SET`` for SET in
benchmarks/cases/hearing_sets.py's ``tuning`` and ``held_out`` (report on held_out; tune on tuning only).

Each utterance is heard twice per path: without context, and with what the assistant said before it
(an answer's question, a dialogue's previous line; for speech with none, an unrelated reply sentence,
``UNRELATED``) as the engine gives it: never over the reply, and only a sentence that asks the user
something (voice.asr.context.answer_context; a tree from before it gave any, so UNRELATED's misleading
shows there). A tree without context hears both the same way.

- ``wer`` / ``wer_no_context``: mean word error over utterances with a reference (numbers said as
  words: "5 5" is "five five"); a transcript the guard drops counts as nothing heard.
- ``ms``: median and p95 time per transcription (with context), model loaded and warm.
- ``invented``: transcripts with 3 or more words the reference has no place for; ``dropped``: transcripts
  the guard dropped (``drops`` lists them with why).
- ``context_changed``: utterances whose transcript differs with context, both texts.
- ``load_average``: the 1-minute load before and after (latency depends on it; WER does not).

``--compute-type float32`` hears with CTranslate2's float32 kernels instead of the assistant's int8 ones (the
reference whose words no CPU's integer arithmetic changes), ``--paths`` keeps only the paths named, and
``kernels`` records the environment that chose CTranslate2's kernels: the same run with ``CT2_USE_MKL=0
CT2_FORCE_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2`` hears on a wide Intel CPU as an AVX2-only AMD one does.

Usage: python benchmarks/asr_models.py [--sets fixtures,held_out] [--every N] [--against TREE] [--out FILE]
[--compute-type T] [--paths P,...]
(fixtures and held_out: about 15 minutes on 2 busy cores; --against doubles it)
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cases.hearing_sets import hearing_set
from common.harness import print_measured
from common.word_error import insertions, wer_said

from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav
from voice.errors import ModelError
from voice.models import resolve

try:  # a tree from before the guard (--against) hears unguarded
    from voice.asr.guard import guarded
except ImportError:
    guarded = None

try:  # a tree from before the rule (--against) gave any last sentence as context
    from voice.asr.context import answer_context
except ImportError:

    def answer_context(heard: str) -> str:
        return heard


AUDIO = Path(__file__).resolve().parents[1] / "audio"
UNRELATED = "Tomorrow starts dry, then rain moves in from the west."
INVENTED_AT_LEAST = 3


@dataclass(frozen=True)
class Heard:
    corpus: str
    name: str
    text: str  # the reference
    context: str
    samples: Samples


def fixtures() -> list[Heard]:
    manifest = json.loads((AUDIO / "manifest.json").read_text(encoding="utf-8"))
    return [
        Heard("fixtures", f["file"], f["text"], "", read_wav(AUDIO / f["file"]).samples)
        for f in manifest["fixtures"]
        if f["kind"] == "speech"
    ]


def corpora(sets: list[str], every: int) -> list[Heard]:
    found: list[Heard] = []
    for which in sets:
        if which == "fixtures":
            found += fixtures()
            continue
        spoken = hearing_set(which)
        synthesized = [s for s in spoken if s.family != "real"][::every]
        real = [s for s in spoken if s.family == "real"]
        found += [Heard(f"espeak {which}", s.name, s.text, s.context, s.samples) for s in synthesized]
        found += [Heard(f"real {which}", s.name, s.text, s.context, s.samples) for s in real]
    return found


def product(settings: WhisperSettings) -> Transcriber:
    """Whisper as the assistant hears with it: behind the guard, where this tree has one."""
    whisper = WhisperTranscriber(settings)
    return whisper if guarded is None else guarded(whisper)


def hearer(transcriber: Transcriber, over_reply: bool) -> Callable[[AudioBlock, str], tuple[str, str | None]]:
    """(text, why it was dropped or None) for audio and a context; a tree without context ignores it."""
    takes_context = "context" in inspect.signature(transcriber.transcribe).parameters

    def hear(audio: AudioBlock, context: str) -> tuple[str, str | None]:
        extra: dict[str, Any] = {"context": context} if takes_context and context else {}
        try:
            return transcriber.transcribe(audio, over_reply=over_reply, **extra).text, None
        except ModelError as exc:  # the guard's drop: nothing heard
            return "", str(exc)

    return hear


# the environment that chooses which kernels CTranslate2 runs
KERNEL_ENVIRONMENT = ("CT2_USE_MKL", "CT2_FORCE_CPU_ISA", "ONEDNN_MAX_CPU_ISA")


def measure(sets: list[str], every: int, compute_type: str, only: list[str]) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    said = corpora(sets, every)
    builders: dict[str, Callable[[], Callable[[AudioBlock, str], tuple[str, str | None]]]] = {
        "quiet question": lambda: hearer(product(WhisperSettings(compute_type=compute_type)), False),
        "over the reply": lambda: hearer(product(WhisperSettings(compute_type=compute_type)), True),
        "quiet question beam 1": lambda: hearer(
            product(WhisperSettings(compute_type=compute_type, beam_size=1)), False
        ),
        "full window": lambda: hearer(
            product(WhisperSettings(short_window=False, compute_type=compute_type)), False
        ),
        "whisper base": lambda: hearer(
            product(WhisperSettings(model=resolve.asr_model("whisper-base"), compute_type=compute_type)),
            False,
        ),
    }
    paths = {path: build() for path, build in builders.items() if not only or path in only}
    texts: dict[str, dict[str, list[str]]] = {p: {"with": [], "without": []} for p in paths}
    times: dict[str, list[float]] = {p: [] for p in paths}
    drops: list[dict[str, str]] = []
    for index, heard in enumerate(said):
        print(f"{index + 1}/{len(said)} {heard.name}", file=sys.stderr, flush=True)
        audio = AudioBlock(heard.samples, ENGINE_RATE)
        for path, hear in paths.items():
            # as the engine gives it
            given = "" if path == "over the reply" else answer_context(heard.context or UNRELATED)
            for mode, context in (("without", ""), ("with", given)):
                started = time.perf_counter()
                text, why = hear(audio, context)
                if mode == "with":
                    times[path].append((time.perf_counter() - started) * 1000)
                texts[path][mode].append(text)
                if why is not None:
                    drops.append({"path": path, "context": mode, "utterance": heard.name, "why": why})
    names = sorted({h.corpus for h in said}, key=lambda c: [h.corpus for h in said].index(c))

    def figures(path: str, corpus: str) -> dict[str, Any]:
        chosen = [i for i, h in enumerate(said) if h.corpus == corpus]
        scored = [i for i in chosen if said[i].text]
        with_, without = texts[path]["with"], texts[path]["without"]
        ms = sorted(times[path][i] for i in chosen)
        return {
            "wer": round(statistics.mean(wer_said(said[i].text, with_[i]) for i in scored), 3),
            "wer_no_context": round(statistics.mean(wer_said(said[i].text, without[i]) for i in scored), 3),
            "ms": {
                "median": round(statistics.median(ms), 1),
                "p95": round(ms[round(0.95 * (len(ms) - 1))], 1),
            },
            "invented": sum(
                insertions(said[i].text, t[i]) >= INVENTED_AT_LEAST for t in (with_, without) for i in scored
            ),
            "dropped": sum(
                1 for d in drops if d["path"] == path and d["utterance"] in {said[i].name for i in chosen}
            ),
        }

    return {
        "utterances": {corpus: sum(h.corpus == corpus for h in said) for corpus in names},
        "cpus": os.cpu_count(),
        "compute_type": compute_type,
        "kernels": {name: os.environ.get(name) for name in KERNEL_ENVIRONMENT},
        "paths": {path: {corpus: figures(path, corpus) for corpus in names} for path in paths},
        "drops": drops,
        "context_changed": [
            {
                "path": path,
                "utterance": h.name,
                "said": h.text,
                "context": h.context or UNRELATED,
                "without": texts[path]["without"][i],
                "with": texts[path]["with"][i],
            }
            for path in paths
            for i, h in enumerate(said)
            if texts[path]["without"][i] != texts[path]["with"][i]
        ],
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets", default="fixtures,held_out", help="fixtures, tuning, held_out (comma-separated)"
    )
    parser.add_argument("--every", type=int, default=1, help="of the synthesized voices, every Nth utterance")
    parser.add_argument("--against", type=Path, help="another source tree: its figures first, as 'before'")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--compute-type", default="int8", help="int8 (the assistant's) or float32")
    parser.add_argument("--paths", default="", help="only these paths (comma-separated): 'quiet question'")
    args = parser.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    only = [p for p in args.paths.split(",") if p]
    figures = lambda: measure(sets, args.every, args.compute_type, only)  # noqa: E731
    print_measured(__file__, args, figures)


if __name__ == "__main__":
    main()
