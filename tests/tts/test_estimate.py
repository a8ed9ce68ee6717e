"""Estimated word spans share the sounding audio out by spoken length, trimmed of silence, a little late."""

from __future__ import annotations

import itertools

import numpy as np

from voice.tts.estimate import estimate_spans, spoken_weight


def padded_tone(silence: int, sound: int) -> np.ndarray:
    tone = np.where(np.arange(sound) % 20 < 10, 0.5, -0.5).astype(np.float32)  # a square wave: never quiet
    quiet = np.full(silence, 1e-4, dtype=np.float32)
    return np.concatenate([quiet, tone, quiet])


def test_spans_share_out_the_sounding_part_40_ms_late_and_follow_each_other() -> None:
    late = 640  # 40 ms: as close to piper's alignments as an estimate gets (benchmarks/README.md, decided)
    audio = padded_tone(silence=4000, sound=16000)  # 250 ms of quiet each side: more than the lateness

    spans = estimate_spans(["Tomorrow", "starts", "dry."], audio)

    assert spans[0][0] == 4000 + late
    assert spans[-1][1] == 4000 + 16000 + late
    assert [end for _, end in spans[:-1]] == [start for start, _ in spans[1:]]


def test_a_span_never_runs_past_the_audio() -> None:
    audio = padded_tone(silence=400, sound=16000)  # 25 ms of quiet after: less than the lateness

    assert estimate_spans(["Tomorrow", "starts", "dry."], audio)[-1][1] == audio.size


def test_the_voice_pauses_at_punctuation_between_words() -> None:
    spans = estimate_spans(["Tomorrow", "starts", "dry,", "then", "rain."], padded_tone(0, 32000))

    gaps = [start - end for (_, end), (start, _) in itertools.pairwise(spans)]
    assert gaps[0] == gaps[1] == gaps[3] == 0
    assert gaps[2] > 0


def test_longer_words_get_longer_spans() -> None:
    spans = estimate_spans(["at", "$3.50", "a", "wonderful", "restaurant."], padded_tone(0, 32000))

    lengths = [end - start for start, end in spans]
    assert lengths[1] > lengths[0]
    assert lengths[3] > lengths[2]


def test_numbers_and_symbols_weigh_like_the_words_they_are_read_as() -> None:
    assert spoken_weight("$3.50") > spoken_weight("paid")
    assert spoken_weight("2023") > spoken_weight("year")
    assert spoken_weight("—") == 1.0


def test_silent_audio_gives_empty_spans() -> None:
    assert estimate_spans(["one", "two"], np.zeros(1000, dtype=np.float32)) == [(0, 0), (0, 0)]


def test_no_words_give_no_spans() -> None:
    assert estimate_spans([], padded_tone(10, 100)) == []
