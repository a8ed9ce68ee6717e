"""The playback buffer: reply audio queued by the engine, pulled block by block by the output device.

Two counters describe progress, and the engine needs both to know what the user has heard:

- the *output clock*: ``handed_out`` counts every sample given to the device, silence included, and
  ``position`` (= ``start + handed_out``) is the clock sample of the next one;
- the *enqueue index*: every enqueued sample gets the index ``enqueue()`` returns plus its offset,
  counting on across ``stop()`` (discarded audio keeps its indices, they are simply never played).

``audio_played_to`` is one past the highest enqueue index handed out so far, and
``audio_played_at(clock_sample)`` the same as of the moment the device had been handed everything
before that clock sample. The device plays a sample ``latency`` samples after it is handed out, so
the audio heard by clock sample N is ``audio_played_at(N - latency)``.

A device that silences what it holds but has not played yet (:meth:`take_back`) hands that audio back:
it counts as never played, and a paused queue plays it again on ``resume``. While the device still
holds that silenced audio, :meth:`hold` keeps the buffer handing out silence until :meth:`release`.
A reply resumed after a listener's "yeah" plays the word the pause cut again from its start
(:meth:`replay_from`): the audio handed out from there is taken back the same way.

Thread-safe: ``pull`` runs on the audio device's thread, everything else on the engine's.
"""

from __future__ import annotations

import bisect
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

from voice.audio.block import ENGINE_RATE, Samples
from voice.errors import AudioError, ProtocolError

# How many runs of contiguous playback ``audio_played_at`` remembers; a run ends at each pause, stop
# or underrun, so this covers far more than one reply.
_RUN_HISTORY = 1024
# How much audio handed out the buffer keeps to take back: more than any device holds, and more than
# any word a resumed reply plays again (kept through a pause, however long).
_IN_FLIGHT_S = 2.0


@dataclass(frozen=True)
class PlaybackCounters:
    """A consistent snapshot of the counters (reading the properties one by one races the device thread)."""

    position: int
    handed_out: int
    audio_played_to: int
    queued_frames: int


@dataclass
class _TurnAudio:
    """The turn whose audio was queued last: where its audio starts in the enqueue index, how much."""

    turn: int
    base: int
    queued: int = 0


@dataclass
class _Run:
    """Enqueued samples [index, index + length) were handed out at clock samples [clock, clock + length)."""

    clock: int
    index: int
    length: int


class PlaybackBuffer:
    """Mono float32 audio queued for an output callback to pull; ``stop`` and ``pause`` fade, never click."""

    def __init__(self, rate: int = ENGINE_RATE, start: int = 0, fade_ms: float = 5.0) -> None:
        self.rate = rate
        self.start = start
        self._fade = max(1, round(rate * fade_ms / 1000))
        self._lock = threading.Lock()
        self._queue: deque[tuple[int, Samples]] = deque()  # (enqueue index of first sample, samples)
        # faded-out audio still to play after stop/pause: (index, faded, the samples before the fade)
        self._tail: deque[tuple[int, Samples, Samples]] = deque()
        self._in_flight: deque[_Run] = deque()  # audio handed out lately, unfaded, by output clock
        self._in_flight_audio: deque[Samples] = deque()
        self._in_flight_frames = 0  # their length
        self._queued = 0
        self._enqueued = 0
        self._handed_out = 0
        self._played_to = 0
        self._paused = False
        self._fade_in_left = 0
        self._runs: list[_Run] = []
        self._forgotten_played_to = 0
        self._turn_audio: _TurnAudio | None = None  # the reply audio queued since the last stop
        self._dropped_before = 0  # enqueue index below which a stop discarded everything
        self._held = False
        self.cuts = 0  # times pause or stop cut queued audio short (a device may drop what it holds)

    def enqueue(self, samples: Samples, turn: int | None = None, at: int = 0) -> int:
        """Queue mono audio after what is already queued; returns the enqueue index of its first sample.

        Reply audio names its ``turn`` and where it starts in that turn's audio (``at``), so
        :meth:`reply_played` can say how much of the turn has played; a notice names none.
        """
        audio = np.asarray(samples, dtype=np.float32)
        if audio.ndim != 1:
            raise AudioError(f"playback takes mono samples, got an array shaped {audio.shape}")
        with self._lock:
            index = self._enqueued
            if turn is not None:
                self._tag(turn, at, index, audio.size)
            if audio.size:
                self._queue.append((index, audio.copy()))
                self._queued += audio.size
                self._enqueued += audio.size
            return index

    def _tag(self, turn: int, at: int, index: int, frames: int) -> None:
        """Count ``frames`` more of ``turn``'s audio from ``index``. Lock held."""
        tagged = self._turn_audio
        if tagged is None or tagged.turn != turn:
            tagged = self._turn_audio = _TurnAudio(turn, index)
        if at != tagged.queued:
            raise ProtocolError(f"turn {turn}'s audio queued at {at}, but {tagged.queued} samples are queued")
        tagged.queued += frames

    def reply_played(self, audio_played_to: int) -> tuple[int, int] | None:
        """(turn, how many samples of its audio are played once ``audio_played_to`` is) for the turn whose
        audio was queued last, since the last stop; None if none was."""
        with self._lock:
            tagged = self._turn_audio
        if tagged is None:
            return None
        return tagged.turn, max(0, min(audio_played_to - tagged.base, tagged.queued))

    def pull(self, frames: int) -> Samples:
        """Hand the device exactly ``frames`` samples: queued audio, then silence if the queue runs dry."""
        out = np.zeros(frames, dtype=np.float32)
        with self._lock:
            filled = 0 if self._held else self._drain_tail(out)
            if not self._paused and not self._held:
                fade_in_from = filled
                filled = self._drain(self._queue, out, filled)
                self._apply_fade_in(out[fade_in_from:filled])
            self._handed_out += frames
            self._forget_in_flight()
        return out

    def skip(self, frames: int) -> None:
        """The device played ``frames`` of silence it was never handed (a stream that rested, voice/audio/
        devices.py): the output clock moves on past them."""
        with self._lock:
            self._handed_out += frames
            self._forget_in_flight()

    def hold(self) -> None:
        """Hand out only silence until :meth:`release` (pause, resume and stop work as ever meanwhile)."""
        with self._lock:
            self._held = True

    def release(self) -> None:
        with self._lock:
            self._held = False

    @property
    def is_held(self) -> bool:
        return self._held

    def holds_sound_from(self, clock_sample: int) -> bool:
        """Has audio been handed out at or after ``clock_sample`` (so a device may still be holding it)?"""
        with self._lock:
            return (
                bool(self._in_flight)
                and self._in_flight[-1].clock + self._in_flight[-1].length > clock_sample
            )

    def take_back(self, clock_sample: int) -> int:
        """The device dropped everything handed out from ``clock_sample`` on, unplayed: that audio counts
        as never played and goes back to the head of the queue (a paused queue plays it on ``resume``;
        after ``stop`` it is gone). Fading audio not yet handed out goes back too, as it was. Returns the
        samples taken back. The clock runs on: the device played silence instead."""
        with self._lock:
            back: list[tuple[int, Samples]] = [(index, original) for index, _, original in self._tail]
            self._queued -= sum(len(original) for _, original in back)
            self._tail.clear()
            taken = 0
            while self._in_flight and self._in_flight[-1].clock + self._in_flight[-1].length > clock_sample:
                run, audio = self._in_flight.pop(), self._in_flight_audio.pop()
                keep = max(0, clock_sample - run.clock)
                back.insert(0, (run.index + keep, audio[keep:]))
                taken += run.length - keep
                if keep:
                    self._in_flight.append(_Run(run.clock, run.index, keep))
                    self._in_flight_audio.append(audio[:keep])
            self._in_flight_frames -= taken
            self._forget_runs_from(clock_sample)
            for index, audio in reversed(back):
                if index >= self._dropped_before:  # a stop discarded the rest
                    self._queue.appendleft((index, audio))
                    self._queued += len(audio)
            return taken

    def replay_from(self, turn: int, at: int) -> int:
        """Hand out ``turn``'s audio again from its sample ``at`` (the start of a word a pause cut): what was
        handed out from there goes back to the head of the queue, as :meth:`take_back` puts it, and counts
        as never played. Returns the samples taken back: none if ``at`` was not handed out, or not kept."""
        with self._lock:
            tagged = self._turn_audio
            if tagged is None or tagged.turn != turn:
                return 0
            index = tagged.base + at
            runs = (run for run in self._in_flight if run.index <= index < run.index + run.length)
            clock = next((run.clock + index - run.index for run in runs), None)
        return 0 if clock is None else self.take_back(clock)

    def _forget_runs_from(self, clock_sample: int) -> None:
        """Nothing handed out from ``clock_sample`` on was played. Lock held."""
        while self._runs and self._runs[-1].clock >= clock_sample:
            self._runs.pop()
        if self._runs and self._runs[-1].clock + self._runs[-1].length > clock_sample:
            self._runs[-1].length = clock_sample - self._runs[-1].clock
        last = self._runs[-1] if self._runs else None
        self._played_to = self._forgotten_played_to if last is None else last.index + last.length

    def stop(self) -> None:
        """Discard all queued audio; it ends within the next block with a short fade, and pause is lifted."""
        with self._lock:
            self.cuts += bool(self._queue) or bool(self._tail) or self._paused
            if not self._paused:
                self._fade_out_head()
            self._queued -= sum(len(chunk) for _, chunk in self._queue)
            self._queue.clear()
            self._dropped_before = self._enqueued
            self._turn_audio = None  # a retried attempt counts its audio afresh
            self._paused = False
            self._fade_in_left = 0

    def pause(self) -> None:
        """Go silent within the next block (with a fade), keeping the rest of the queue for ``resume``."""
        with self._lock:
            if not self._paused:
                self.cuts += 1
                self._fade_out_head()
                self._paused = True
                self._fade_in_left = 0

    def resume(self) -> None:
        """Continue right after the audio played before ``pause``, fading back in."""
        with self._lock:
            if self._paused:
                self._paused = False
                self._fade_in_left = self._fade

    @property
    def is_paused(self) -> bool:
        return self._paused

    @property
    def is_playing(self) -> bool:
        """True while queued audio will reach the device on the next pulls (or once a hold ends)."""
        with self._lock:
            return bool(self._tail) or (not self._paused and bool(self._queue))

    @property
    def queued_frames(self) -> int:
        """Samples enqueued but not yet handed out nor discarded (a paused queue still counts)."""
        with self._lock:
            return self._queued

    @property
    def handed_out(self) -> int:
        """Every sample pulled by the device, silence included."""
        with self._lock:
            return self._handed_out

    @property
    def position(self) -> int:
        """Output-clock sample of the next sample to hand out: ``start + handed_out``."""
        with self._lock:
            return self.start + self._handed_out

    @property
    def audio_played_to(self) -> int:
        """One past the highest enqueue index handed out so far (0 before any audio)."""
        with self._lock:
            return self._played_to

    def counters(self) -> PlaybackCounters:
        with self._lock:
            return PlaybackCounters(
                self.start + self._handed_out, self._handed_out, self._played_to, self._queued
            )

    def audio_played_at(self, clock_sample: int) -> int:
        """``audio_played_to`` as it was once every sample before ``clock_sample`` had been handed out."""
        with self._lock:
            at = bisect.bisect_left(self._runs, clock_sample, key=lambda run: run.clock) - 1
            if at < 0:
                return self._forgotten_played_to
            run = self._runs[at]
            return run.index + min(run.length, clock_sample - run.clock)

    def clock_of(self, audio_played_to: int) -> int | None:
        """The inverse of ``audio_played_at``: the output-clock sample right after the enqueued sample
        just before ``audio_played_to`` was handed out; None if that is forgotten or never was."""
        with self._lock:
            at = bisect.bisect_left(self._runs, audio_played_to, key=lambda run: run.index) - 1
            if at < 0:
                return None
            run = self._runs[at]
            if audio_played_to > run.index + run.length:
                return None
            return run.clock + audio_played_to - run.index

    def _drain(self, queue: deque[tuple[int, Samples]], out: Samples, filled: int) -> int:
        """Move audio from ``queue`` into ``out[filled:]``; returns the new fill level. Lock held."""
        while filled < len(out) and queue:
            index, chunk = queue.popleft()
            count = min(len(chunk), len(out) - filled)
            out[filled : filled + count] = chunk[:count]
            self._record(self.start + self._handed_out + filled, index, chunk[:count])
            if count < len(chunk):
                queue.appendleft((index + count, chunk[count:]))
            filled += count
            self._queued -= count
        return filled

    def _drain_tail(self, out: Samples) -> int:
        """Move the faded-out tail into the start of ``out``; returns the fill level. Lock held."""
        filled = 0
        while filled < len(out) and self._tail:
            index, faded, original = self._tail.popleft()
            count = min(len(faded), len(out))
            out[filled : filled + count] = faded[:count]
            self._record(self.start + self._handed_out + filled, index, original[:count])
            if count < len(faded):
                self._tail.appendleft((index + count, faded[count:], original[count:]))
            filled += count
            self._queued -= count
        return filled

    def _forget_in_flight(self) -> None:
        """Audio handed out long enough ago has played on any device: it can no longer be taken back. The
        latest ``_IN_FLIGHT_S`` of audio stay, for a word to be played again after a pause."""
        kept = round(_IN_FLIGHT_S * self.rate)
        horizon = self.start + self._handed_out - kept
        while self._in_flight and self._in_flight[0].clock + self._in_flight[0].length <= horizon:
            if self._in_flight_frames - self._in_flight[0].length < kept:
                break
            self._in_flight_frames -= self._in_flight.popleft().length
            self._in_flight_audio.popleft()

    def _record(self, clock: int, index: int, audio: Samples) -> None:
        length = len(audio)
        self._in_flight.append(_Run(clock, index, length))
        self._in_flight_audio.append(audio)
        self._in_flight_frames += length
        self._played_to = index + length
        last = self._runs[-1] if self._runs else None
        if last is not None and last.clock + last.length == clock and last.index + last.length == index:
            last.length += length
            return
        self._runs.append(_Run(clock, index, length))
        if len(self._runs) > _RUN_HISTORY:
            dropped = self._runs.pop(0)
            self._forgotten_played_to = dropped.index + dropped.length

    def _fade_out_head(self) -> None:
        """Move the next few ms of the queue, ramped down to zero, into the tail. Lock held."""
        ramp = np.arange(self._fade - 1, -1, -1, dtype=np.float32) / self._fade
        taken = 0
        while taken < self._fade and self._queue:
            index, chunk = self._queue.popleft()
            count = min(len(chunk), self._fade - taken)
            faded = (chunk[:count] * ramp[taken : taken + count]).astype(np.float32)
            self._tail.append((index, faded, chunk[:count]))
            if count < len(chunk):
                self._queue.appendleft((index + count, chunk[count:]))
            taken += count

    def _apply_fade_in(self, fresh: Samples) -> None:
        count = min(self._fade_in_left, len(fresh))
        if count:
            done = self._fade - self._fade_in_left
            fresh[:count] *= np.arange(done + 1, done + count + 1, dtype=np.float32) / self._fade
            self._fade_in_left -= count
