"""benchmarks/loop_words.py finds each user WAV where the mic caught it and says whether a reply was playing,
on made-up kept audio (the transcription is whisper's, run by the benchmark itself)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tests.support.benchmark_modules import benchmark_module
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import write_wav

benchmark_module("common.machine")
benchmark_module("common.against")  # loaded first: harness imports them by name
benchmark_module("common.harness")
benchmark_module("common.mic_echo")
benchmark_module("common.word_error")
loop_words: Any = benchmark_module("loop_words")


def test_each_wav_is_found_late_in_the_mic_and_said_over_a_reply_or_in_the_quiet(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    said = (0.1 * rng.standard_normal(ENGINE_RATE)).astype(np.float32)  # a second of "speech"
    mic = (0.001 * rng.standard_normal(10 * ENGINE_RATE)).astype(np.float32)
    reference = np.zeros_like(mic)
    late = round(0.12 * ENGINE_RATE)  # the sink's latency: caught a little after it was played
    for at_s in (2.0, 6.0):
        at = round(at_s * ENGINE_RATE) + late
        mic[at : at + ENGINE_RATE] += said
    reference[6 * ENGINE_RATE : 8 * ENGINE_RATE] = 0.1  # a reply playing over the second
    for name, samples in (("mic", mic), ("cleaned", mic), ("reference", reference)):
        write_wav(tmp_path / f"{name}.wav", AudioBlock(samples, ENGINE_RATE))
    (tmp_path / "user").mkdir()
    write_wav(tmp_path / "user" / "ask.wav", AudioBlock(said, ENGINE_RATE))
    played = [
        {"wav": "ask.wav", "clock": 2 * ENGINE_RATE, "text": "What time is it?"},
        {"wav": "ask.wav", "clock": 6 * ENGINE_RATE, "text": "What time is it?"},
        {"wav": "ask.wav", "clock": 9 * ENGINE_RATE},  # no text (a stop phrase): not scored
    ]
    kept = {"television_from": 5 * ENGINE_RATE, "played": played}
    (tmp_path / "played.json").write_text(json.dumps(kept), encoding="utf-8")

    found = loop_words.spans(tmp_path)

    assert [entry["at_s"] for entry in found] == [2.12, 6.12]
    assert [entry["over_reply"] for entry in found] == [False, True]
    assert [entry["television"] for entry in found] == [False, True]  # on from 5 s
    assert all(entry["match"] > 0.99 for entry in found)
    television = found[1]["audio"]["with_television"] - said  # the canceller's output just before it
    assert np.allclose(
        television,
        mic[6 * ENGINE_RATE + late - ENGINE_RATE : 6 * ENGINE_RATE + late],
        atol=1e-4,  # 16-bit WAVs
    )
