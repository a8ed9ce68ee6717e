"""The echo reference on real devices: the speaker's sound lined up with the mic by the streams' stamps."""

from __future__ import annotations

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo_reference import FRESH_BLOCKS, LEAD_MS, TOLERANCE_MS, EchoReference

BLOCK = 640
LEAD = LEAD_MS * ENGINE_RATE // 1000
PLAYED = np.arange(1, 10 * ENGINE_RATE + 1, dtype=np.float32)  # every sample tells where it was played


class Streams:
    """A speaker and a mic, each counting its own samples; ``epoch`` is the stream time of its sample 0."""

    def __init__(self, speaker_epoch: float, mic_epoch: float) -> None:
        self.reference = EchoReference()
        self.speaker_epoch, self.mic_epoch = speaker_epoch, mic_epoch
        self.played = 0
        self.heard = 0

    def play(self, blocks: int, *, quiet: bool = False) -> None:
        for _ in range(blocks):
            stamp = self.speaker_epoch + self.played / ENGINE_RATE
            samples = PLAYED[self.played : self.played + BLOCK] * (not quiet)
            self.reference.played(AudioBlock(samples, ENGINE_RATE, self.played, stamp))
            self.played += BLOCK

    def hear(self, jitter_s: float = 0.0) -> AudioBlock:
        stamp = self.mic_epoch + self.heard / ENGINE_RATE + jitter_s
        block = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, self.heard, stamp)
        self.heard += BLOCK
        return self.reference.for_mic(block)


def speaker_sample_heard(streams: Streams, mic_sample: int) -> int:
    """The speaker sample that reaches the mic at ``mic_sample``: played and captured at the same time."""
    return mic_sample + round((streams.mic_epoch - streams.speaker_epoch) * ENGINE_RATE)


def lined_up(streams: Streams) -> None:
    """The speaker is quiet for a while after the start: the stamps settle and the streams line up."""
    streams.play(FRESH_BLOCKS + 2, quiet=True)
    for _ in range(FRESH_BLOCKS):
        streams.hear()


def test_the_reference_holds_what_the_mic_hears_a_little_ahead_though_the_counts_differ() -> None:
    streams = Streams(speaker_epoch=100.0, mic_epoch=100.3)  # the speaker started 0.3 s before the mic
    lined_up(streams)
    streams.play(20)
    reference = streams.hear()

    first = speaker_sample_heard(streams, reference.start) + LEAD  # echo comes LEAD after its reference
    assert np.array_equal(reference.samples, PLAYED[first : first + BLOCK])
    assert reference.start == FRESH_BLOCKS * BLOCK


def test_after_the_mic_drops_audio_the_reference_lines_up_again() -> None:
    streams = Streams(speaker_epoch=100.0, mic_epoch=100.3)
    lined_up(streams)
    streams.play(40)
    for _ in range(10):
        streams.hear()
    streams.mic_epoch += 0.1  # 100 ms of input lost: the mic's count now lags the time by that much
    streams.reference.glitch()  # the driver saw the overflow counter move
    streams.play(10)

    reference = streams.hear()  # at once, while the speaker talks: the echo keeps its place

    first = speaker_sample_heard(streams, reference.start) + LEAD
    assert np.array_equal(reference.samples, PLAYED[first : first + BLOCK])
    assert streams.reference.realignments == 1


def test_stamp_jitter_alone_does_not_move_the_alignment() -> None:
    streams = Streams(speaker_epoch=50.0, mic_epoch=50.0)
    lined_up(streams)
    streams.play(60)
    jitter = np.random.default_rng(7).uniform(-0.004, 0.004, 50)

    references = [streams.hear(float(j)) for j in jitter]

    assert streams.reference.realignments == 0
    first = speaker_sample_heard(streams, references[-1].start) + LEAD
    assert abs(references[-1].samples[0] - PLAYED[first]) <= TOLERANCE_MS * ENGINE_RATE // 1000


def test_without_stamps_the_counts_are_used_and_silence_outside_what_was_kept() -> None:
    reference = EchoReference(seconds=1)
    for start in range(0, 40_000, BLOCK):
        reference.played(AudioBlock(PLAYED[start : start + BLOCK], ENGINE_RATE, start))

    def heard(start: int, frames: int) -> np.ndarray:
        return reference.for_mic(AudioBlock(np.zeros(frames, np.float32), ENGINE_RATE, start)).samples

    assert np.array_equal(heard(30_000, 5_000), PLAYED[30_000 + LEAD : 35_000 + LEAD])  # wraps the ring
    assert not heard(39_500, 1_000)[500 - LEAD :].any()  # not played yet
    assert not heard(1_000, 100).any()  # too old to be kept


def test_stamps_still_settling_after_the_start_are_not_followed() -> None:
    streams = Streams(speaker_epoch=10.0, mic_epoch=10.0)
    streams.play(60)
    streams.mic_epoch -= 0.8  # PulseAudio's first capture stamps lag by most of a second...
    references = []
    for _ in range(20):
        references.append(streams.hear())
        streams.mic_epoch += 0.04  # ...then catch up by a block's length per block

    assert streams.reference.realignments == 0
    assert np.array_equal(references[-1].samples, PLAYED[references[-1].start + LEAD :][:BLOCK])


def test_a_slow_drift_is_corrected_only_once_the_speaker_falls_quiet() -> None:
    streams = Streams(speaker_epoch=20.0, mic_epoch=20.0)
    lined_up(streams)
    streams.play(30)
    for _ in range(10):
        streams.hear()
    streams.mic_epoch += 0.03  # the clocks have drifted 30 ms apart, while the assistant talks

    talking = [streams.hear() for _ in range(10)][-1]
    streams.play(5, quiet=True)
    quiet = [streams.hear() for _ in range(5)][-1]

    assert np.array_equal(talking.samples, PLAYED[talking.start + LEAD :][:BLOCK])  # no jump mid-speech
    assert streams.reference.lag == quiet.start - speaker_sample_heard(streams, quiet.start)  # then it is
    assert streams.reference.realignments == 1


def test_a_speaker_sample_is_placed_on_the_mic_clock_only_once_the_stamps_line_the_streams_up() -> None:
    streams = Streams(speaker_epoch=100.0, mic_epoch=100.3)  # the speaker started 0.3 s before the mic
    assert streams.reference.mic_sample_of(8000) is None  # no stamps yet: the counts say nothing
    lined_up(streams)
    streams.play(20)
    streams.hear()

    played = 20 * BLOCK
    heard_at = streams.reference.mic_sample_of(played)
    assert heard_at is not None
    assert speaker_sample_heard(streams, heard_at) == played
