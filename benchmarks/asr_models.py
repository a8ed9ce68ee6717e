"""Whisper tiny.en (bundled) against base (pulled, multilingual), side by side in one process.

Utterances: those of asr_window.py, every recording we have: the speech fixtures (audio/manifest.json) as
recorded and under pink noise at 10 and 0 dB SNR, and sentences espeak-ng says now in voices the fixtures
do not use. Both models run with the assistant's settings (int8, greedy, English, the cut encoder window
for short speech) and hear the same audio, alternately; "base, full window" is base always padded to
whisper's 30 s window, to tell the model's errors from the cut window's.

- ``word_error_rate``: mean WER against the text said, per condition and in all, per model.
- ``ms``: transcription time per utterance (model loaded and warm), median and p95, per model.
- ``load_s``: time to load and warm up each model.
- ``multilingual``: base on sentences espeak-ng says in other languages, the language detected or given
  (WER counts accented letters as word breaks, so it is a rough figure).
- ``differ``: utterances tiny.en and base transcribe differently, with every model's text.
- ``load_average``: the machine's 1-minute load before and after, since other work shares the cores.

Needs `voice models pull whisper-base` first.
Usage: python benchmarks/asr_models.py [--rounds 2]   (about 6 minutes on 2 busy cores)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from asr_window import spoken, utterances
from word_error import wer

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.models import resolve

OTHER_LANGUAGES = (
    ("de", "Wie wird das Wetter morgen in Berlin?"),
    ("fr", "Quelle heure est-il maintenant en France?"),
    ("es", "Pon un temporizador de diez minutos, por favor."),
)


def loaded(settings: WhisperSettings) -> tuple[WhisperTranscriber, float]:
    started = time.perf_counter()
    transcriber = WhisperTranscriber(settings)
    return transcriber, round(time.perf_counter() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    base_dir = resolve.asr_model("whisper-base")
    said = utterances()
    models: dict[str, tuple[WhisperTranscriber, float]] = {
        "tiny.en": loaded(WhisperSettings()),
        "base": loaded(WhisperSettings(model=base_dir)),
        "base, full window": loaded(WhisperSettings(model=base_dir, short_window=False)),
    }
    times: dict[str, list[float]] = {name: [] for name in models}
    texts: dict[str, list[str]] = {name: [] for name in models}
    for round_ in range(args.rounds):
        for _condition, _text, samples in said:
            for name, (transcriber, _) in models.items():
                started = time.perf_counter()
                heard = transcriber.transcribe(AudioBlock(samples, ENGINE_RATE)).text
                times[name].append((time.perf_counter() - started) * 1000)
                if round_ == 0:
                    texts[name].append(heard)
    foreign = []
    for language, text in OTHER_LANGUAGES:
        audio = AudioBlock(spoken(text, language), ENGINE_RATE)
        for asked in (None, language):
            transcriber, _ = loaded(WhisperSettings(model=base_dir, language=asked))
            heard = transcriber.transcribe(audio).text
            foreign.append(
                {
                    "said": text,
                    "language": asked or "detected",
                    "heard": heard,
                    "wer": round(wer(text, heard), 3),
                }
            )
    conditions = sorted({condition for condition, _, _ in said})
    result: dict[str, Any] = {
        "utterances": len(said),
        "cpus": os.cpu_count(),
        "load_s": {name: load for name, (_, load) in models.items()},
        "ms": {
            name: {
                "median": round(statistics.median(t), 1),
                "p95": round(sorted(t)[round(0.95 * (len(t) - 1))], 1),
            }
            for name, t in times.items()
        },
        "word_error_rate": {
            name: {
                **{
                    condition: round(
                        statistics.mean(
                            wer(text, heard[i]) for i, (c, text, _) in enumerate(said) if c == condition
                        ),
                        3,
                    )
                    for condition in conditions
                },
                "all": round(statistics.mean(wer(text, heard[i]) for i, (_, text, _) in enumerate(said)), 3),
            }
            for name, heard in texts.items()
        },
        "multilingual": foreign,
        "differ": [
            {"said": text, **{name: heard[i] for name, heard in texts.items()}}
            for i, (_, text, _) in enumerate(said)
            if texts["tiny.en"][i] != texts["base"][i]
        ],
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
