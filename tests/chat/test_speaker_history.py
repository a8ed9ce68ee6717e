"""The echo canceller's reference: what the speaker played at each clock sample, silence elsewhere."""

from __future__ import annotations

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.chat.driver import SpeakerHistory


def test_the_reference_is_what_played_across_the_ring_wrap_and_silence_outside_it() -> None:
    history = SpeakerHistory(seconds=1)
    played = np.arange(40_000, dtype=np.float32)
    for start in range(0, len(played), 640):
        history.record(AudioBlock(played[start : start + 640], ENGINE_RATE, start))

    assert np.array_equal(history.span(30_000, 5_000).samples, played[30_000:35_000])  # wraps the ring
    assert not history.span(39_500, 1_000).samples[500:].any()  # not played yet
    assert not history.span(1_000, 100).samples.any()  # too old to be kept
    assert history.span(39_500, 1_000).start == 39_500
