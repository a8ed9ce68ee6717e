"""The echo canceller's reference on real devices: what the speaker played, lined up with the mic by time.

The mic and the speaker are separate streams, each counting its own samples. Their counts drift apart
whenever a device drops or inserts audio (an input overflow, an output underflow, a stalled callback),
so looking the reference up on the mic's sample count slowly slides it away from the echo until it
comes *after* the echo, which no canceller can remove. PortAudio stamps every callback with the
stream time at which its first sample was captured (ADC) or will be played (DAC); the difference of
the two streams' epochs (stream time of their sample 0) says which speaker sample the mic hears now.
Those stamps jitter by several milliseconds from block to block, so each epoch is a running median,
and the alignment only moves when it is off by more than ``TOLERANCE_MS``: each move is counted.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples

REFERENCE_SECONDS = 10  # how much speaker history the echo canceller can reach back into
LEAD_MS = 50  # hand the reference this much early: echo must never arrive before its reference
TOLERANCE_MS = 20  # stamps jitter; a smaller disagreement is left to the cancellers' own delay tracking
EPOCH_BLOCKS = 9  # a median over this many blocks (about a third of a second) rides out jitter
FRESH_BLOCKS = 5  # an epoch is a median of at least this many stamps
QUIET_MS = 100  # a slow correction waits until the speaker has been this quiet: a jump mid-speech leaks echo


class StreamEpoch:
    """A stream's time of sample 0: the median of its blocks' stamps, once they hold steady.

    Stamps settle for seconds after a stream starts (PulseAudio's capture stamps first lag by most of
    a second, then catch up by a block's length per block); an epoch still on the move is no epoch.
    """

    def __init__(self, rate: int = ENGINE_RATE, steady_s: float = TOLERANCE_MS / 1000) -> None:
        self._rate = rate
        self._steady_s = steady_s
        self._recent: deque[float] = deque(maxlen=EPOCH_BLOCKS)

    def stamp(self, block: AudioBlock) -> None:
        if block.device_time:  # 0 or None: the host API gives no time
            self._recent.append(block.device_time - block.start / self._rate)

    def forget(self) -> None:
        """After a glitch: the old stamps describe a count that no longer holds."""
        self._recent.clear()

    @property
    def latest(self) -> float | None:
        return self._recent[-1] if self._recent else None

    @property
    def value(self) -> float | None:
        """The epoch, or None while there are too few stamps or they still drift one way."""
        if len(self._recent) < FRESH_BLOCKS:
            return None
        stamps = list(self._recent)
        half = len(stamps) // 2
        if abs(statistics.median(stamps[:half]) - statistics.median(stamps[half:])) > self._steady_s:
            return None
        return statistics.median(stamps)


class EchoReference:
    """What the speaker played, by its own sample count, and the part of it the mic hears in each block.

    ``played`` runs on the speaker's device thread, everything else on the mic's consumer. ``lead_ms``
    covers the stamps' jitter; a room whose stamps are exact needs none.
    """

    def __init__(
        self, rate: int = ENGINE_RATE, seconds: int = REFERENCE_SECONDS, lead_ms: int = LEAD_MS
    ) -> None:
        self.rate = rate
        self.realignments = 0
        self.lag = 0  # mic sample c hears speaker sample c - lag
        self._aligned = False
        self._resync = False  # a glitch moved the counts: line up from the next fresh stamps
        self._pending: int | None = None  # a slower correction, waiting for the speaker to fall quiet
        self._ring = np.zeros(seconds * rate, dtype=np.float32)
        self._end = 0
        self._lock = threading.Lock()
        self._speaker = StreamEpoch(rate)
        self._mic = StreamEpoch(rate)
        self._lead = lead_ms * rate // 1000
        self._tolerance = TOLERANCE_MS * rate // 1000
        self._quiet = QUIET_MS * rate // 1000

    def played(self, block: AudioBlock) -> None:
        """Every block handed to the speaker, at its start on the speaker's count."""
        with self._lock:
            self._speaker.stamp(block)
            if block.start > self._end:  # the speaker played silence it was never handed (it rested)
                gap_from = max(self._end, block.start - len(self._ring))
                self._copy(gap_from, np.zeros(block.start - gap_from, dtype=np.float32), into_ring=True)
            self._copy(block.start, block.samples, into_ring=True)
            self._end = max(self._end, block.end)

    def unplayed_from(self, speaker_sample: int) -> None:
        """What was handed to the speaker from ``speaker_sample`` on never sounded (it was silenced in the
        device): no echo of it will come, so the reference holds silence there instead."""
        with self._lock:
            start = max(speaker_sample, self._end - len(self._ring))
            if self._end > start:
                self._copy(start, np.zeros(self._end - start, dtype=np.float32), into_ring=True)

    def glitch(self) -> None:
        """A device dropped or inserted audio (an overflow or underflow): the counts moved against each
        other, so line up again from the very next stamps, before the cancellers lose the echo (the
        echo keeps its place against the reference, so this jump, unlike a slow correction, is safe)."""
        with self._lock:
            self._speaker.forget()
            self._mic.forget()
            self._resync = self._aligned

    def restart(self) -> None:
        """The streams were reopened: their stamps settle again; until then the counts are all there is."""
        with self._lock:
            self._speaker.forget()
            self._mic.forget()
            self._aligned = self._resync = False
            self._pending = None
            self.lag = 0

    def mic_sample_of(self, speaker_sample: int) -> int | None:
        """The mic-clock sample captured as ``speaker_sample`` played, once the stamps line the streams up."""
        with self._lock:
            return speaker_sample + self.lag if self._aligned else None

    def for_mic(self, mic: AudioBlock) -> AudioBlock:
        """The reference for ``mic``, on the mic's clock: what it may hear of the speaker, a little early."""
        with self._lock:
            self._mic.stamp(mic)
            self._align()
            start = mic.start - self.lag + self._lead
            out = np.zeros(mic.frames, dtype=np.float32)
            lo, hi = max(start, self._end - len(self._ring)), min(start + mic.frames, self._end)
            if hi > lo:
                self._copy(lo, out[lo - start : hi - start], into_ring=False)
        return AudioBlock(out, self.rate, mic.start)

    def _align(self) -> None:
        if self._resync:
            speaker, mic = self._speaker.latest, self._mic.latest
            if speaker is None or mic is None:
                return
            self._resync = False
            lag = round((speaker - mic) * self.rate)
            if abs(lag - self.lag) > self._tolerance:
                self.lag = lag
                self.realignments += 1
            return
        speaker, mic = self._speaker.value, self._mic.value
        if speaker is None or mic is None:
            return  # no stamps (yet): the counts are all there is
        lag = round((speaker - mic) * self.rate)
        if not self._aligned or abs(lag - self.lag) > self._tolerance:
            self._pending = lag
        if self._pending is not None and self._speaker_quiet():
            self.realignments += self._aligned
            self.lag, self._aligned, self._pending = self._pending, True, None

    def _speaker_quiet(self) -> bool:
        """Has the speaker played only silence lately (so no echo is in flight to be lost by a jump)?"""
        recent = np.zeros(self._quiet, dtype=np.float32)
        if self._end >= self._quiet:
            self._copy(self._end - self._quiet, recent, into_ring=False)
        return not recent.any()

    def _copy(self, clock: int, samples: Samples, *, into_ring: bool) -> None:
        """Move ``samples`` to or from the ring at ``clock``, in at most two slices (it wraps once)."""
        at, done = clock % len(self._ring), 0
        while done < len(samples):
            length = min(len(samples) - done, len(self._ring) - at)
            if into_ring:
                self._ring[at : at + length] = samples[done : done + length]
            else:
                samples[done : done + length] = self._ring[at : at + length]
            done, at = done + length, 0
