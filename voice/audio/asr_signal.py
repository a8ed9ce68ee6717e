"""What ASR hears of an utterance: the mic with the echo subtracted linearly, from where the user began.

Two things damaged the words of a user who talks over the assistant (measured with the echo sweep):
AEC3's double-talk suppression, and the utterance's start. The VAD listens to AEC3's output, which
mutes the start of speech over the assistant, so it finds the onset up to 1.2 s late and the VAD's
pre-roll no longer reaches back to the first word ("Sorry, I meant on Sunday." became "I'm Anton
Sunnade." even from the user's voice alone). :class:`AsrSignal` keeps the mic run through a linear
canceller (Speex's MDF: it subtracts the echo and suppresses nothing) by clock sample, and
:class:`TranscribingAsrSignal` hands ASR that signal for each utterance the VAD cut; when the
speaker was audible at its start, from where the user's voice began in it, up to
``DOUBLE_TALK_REACH_MS`` earlier (not from a fixed point: whisper turns residual echo into words). The
VAD and the echo judgement still hear AEC3's output, so the barge-in reaction does not change; ASR
hears one continuous signal, never a switch from one canceller's output to another's mid-word.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from voice.asr.port import TimedWord, Transcriber, Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.echo_delay import EchoDelay
from voice.audio.linear_echo import SpeexEchoCanceller
from voice.audio.vad import DEFAULT_BARGE_IN

KEPT_SECONDS = 40  # longer than the longest utterance (30 s) plus the VAD's pre-roll and the reach
FRAME_MS = 10
ECHO_TAIL_MS = 400  # echo may reach the mic this long after the reference played (delay, lead, room)
AUDIBLE = 1e-4  # reference RMS above this (-80 dBFS) is sound the mic may pick up
ECHO_ONLY = 0.97  # raw mic this alike to the speaker's own sound (normalised correlation) holds no user
DOUBLE_TALK_REACH_MS = 1000  # the VAD's pre-roll plus this covers its late onsets under AEC3 (up to 1.2 s)
ONSET_FRAME_MS = 20
USER_KEPT_DB = -6.0  # a frame where the canceller kept more of the mic than this holds the user's voice
USER_LEVEL_DBFS = -55.0  # and is louder than this
ONSET_GAP_MS = 200  # a pause in the user's voice longer than this ends the search back for its start
ONSET_MARGIN_MS = 100  # start this much before the first frame found: the soft start of a word
SPANS_KEPT = 8  # the latest utterances transcribed: a reach back stops at the end of the one before


class AsrSignal:
    """The mic with the echo subtracted linearly, the raw mic and the reference, for the last
    ``KEPT_SECONDS``, and per 10 ms whether the speaker was audible.

    ``add`` runs where the mic blocks are handled; ``words_for`` and ``only_echo`` on the ASR worker.
    """

    def __init__(self, rate: int = ENGINE_RATE, canceller: SpeexEchoCanceller | None = None) -> None:
        self.rate = rate
        self._canceller = canceller or SpeexEchoCanceller(rate)
        self._delay = EchoDelay(rate)
        self._frame = rate * FRAME_MS // 1000
        self._tail = ECHO_TAIL_MS // FRAME_MS
        self._reach = DOUBLE_TALK_REACH_MS * rate // 1000
        self._words = np.zeros(KEPT_SECONDS * rate, dtype=np.float32)
        self._raw = np.zeros(len(self._words), dtype=np.float32)
        self._reference = np.zeros(len(self._words), dtype=np.float32)
        self._audible = np.zeros(len(self._words) // self._frame, dtype=bool)  # per frame of the reference
        self._first: int | None = None  # the first sample ever added
        self._end: int | None = None
        self._spans: deque[tuple[int, int]] = deque(maxlen=SPANS_KEPT)  # (start, end) transcribed
        self._lock = threading.Lock()

    def add(self, mic: AudioBlock, reference: AudioBlock) -> None:
        """The raw ``mic`` block and the reference the echo canceller got for it (whole 10 ms frames)."""
        moves = self._delay.moves
        aligned = self._delay.align(mic, reference)
        if self._delay.moves != moves:
            self._canceller.reset()  # what it learned belongs to the old lag
        words = self._canceller.process(mic, aligned).samples
        loud = np.sqrt(np.mean(np.square(reference.samples.reshape(-1, self._frame)), axis=1)) > AUDIBLE
        with self._lock:
            _write(self._words, mic.start, words)
            _write(self._raw, mic.start, mic.samples)
            _write(self._reference, mic.start, reference.samples)
            _write(self._audible, mic.start // self._frame, loud)
            self._end = mic.end
            self._first = mic.start if self._first is None else self._first

    def words_for(self, utterance: AudioBlock) -> AudioBlock:
        """The linear canceller's output over ``utterance``; if the speaker was audible as it began,
        from where the user's voice really began, up to DOUBLE_TALK_REACH_MS earlier (never back into
        the utterance before it). The utterance as the VAD cut it if that audio is no longer kept."""
        start, end = utterance.start, utterance.end
        with self._lock:
            if self._end is None or self._first is None or end > self._end:
                return utterance
            kept_from = max(self._first, self._end - len(self._words))
            if start < kept_from:
                return utterance
            onset = min(end, start + DEFAULT_BARGE_IN.pre_roll_ms * self.rate // 1000)
            before = [e for s, e in self._spans if s < start]
            reach_from = max(start - self._reach, kept_from, max(before, default=kept_from))
            if reach_from < start and self._was_audible(reach_from, onset):
                span = np.arange(reach_from, onset)
                began = user_onset(
                    np.take(self._words, span, mode="wrap"), np.take(self._raw, span, mode="wrap"), self.rate
                )
                if began is not None:
                    start = min(start, reach_from + began)
            if (utterance.start, end) not in self._spans:
                self._spans.append((utterance.start, end))
            words = np.take(self._words, np.arange(start, end), mode="wrap")
        return AudioBlock(words.astype(np.float32), utterance.rate, start)

    def _was_audible(self, start: int, end: int) -> bool:
        """Did the speaker play anything that could reach the mic in [start, end)? (lock held)"""
        first = max(0, start // self._frame - self._tail)
        frames = np.arange(first, max(first, -(-end // self._frame)))
        return bool(np.any(np.take(self._audible, frames, mode="wrap")))

    def only_echo(self, utterance: AudioBlock) -> bool:
        """Is the raw mic over ``utterance`` nothing but the speaker's sound coming back (echo AEC3 let
        through while it adapted), so like the reference that no one else can be speaking?"""
        # only the voiced part: the VAD's pre-roll and tail around it are echo whoever spoke
        edge = DEFAULT_BARGE_IN.pre_roll_ms * self.rate // 1000
        start, frames, tail = utterance.start + edge, utterance.frames - 2 * edge, self._tail * self._frame
        if frames <= 0:
            return False
        with self._lock:
            end = self._end
            if end is None or start + frames > end or start - tail < end - len(self._raw):
                return False
            raw = np.take(self._raw, np.arange(start, start + frames), mode="wrap")
            reference = np.take(self._reference, np.arange(start - tail, start + frames), mode="wrap")
        if not np.any(reference):
            return False
        return _max_correlation(reference, raw) >= ECHO_ONLY


def user_onset(words: Samples, raw: Samples, rate: int) -> int | None:
    """Where the user's voice begins in ``words`` (the linear canceller's output) and goes on to its
    end without a long gap, less ONSET_MARGIN_MS; None if it holds no user, or if no quiet stretch
    before it shows where it began.

    A 20 ms frame holds the user when the canceller kept most of the mic's energy there (echo alone
    loses 10-30 dB to it) and the frame is not silence. A canceller still learning the room (after a
    glitch moved the reference) keeps most of the echo too: then every frame looks like the user, no
    beginning is found, and ASR hears the VAD's cut alone rather than a second of echo.
    """
    frame = rate * ONSET_FRAME_MS // 1000
    frames = len(words) // frame
    if frames == 0:
        return None
    tail = len(words) - frames * frame  # whole frames, aligned to the end (the VAD's onset)
    kept = np.square(words[tail:].reshape(frames, frame), dtype=np.float64).sum(axis=1)
    heard = np.square(raw[tail:].reshape(frames, frame), dtype=np.float64).sum(axis=1)
    user = (kept > heard * 10 ** (USER_KEPT_DB / 10)) & (kept > frame * 10 ** (USER_LEVEL_DBFS / 10))
    gap_frames, first, quiet = ONSET_GAP_MS // ONSET_FRAME_MS, None, 0
    for index in range(frames - 1, -1, -1):
        if user[index]:
            first, quiet = index, 0
        else:
            quiet += 1
            if quiet > gap_frames:
                break
    else:
        return None  # the voice runs on to the start of the span: where it began is not in it
    if first is None:
        return None
    return max(0, tail + first * frame - ONSET_MARGIN_MS * rate // 1000)


def _max_correlation(reference: Samples, raw: Samples) -> float:
    """The largest normalised correlation of ``raw`` with any stretch of ``reference`` as long as it."""
    size = len(reference) + len(raw)
    products = np.fft.irfft(np.fft.rfft(reference, size) * np.conj(np.fft.rfft(raw, size)), size)
    lags = len(reference) - len(raw) + 1
    energy = np.cumsum(np.concatenate(([0.0], np.square(reference, dtype=np.float64))))
    windows = energy[len(raw) : len(raw) + lags] - energy[:lags]
    norm = np.sqrt(np.maximum(windows, 1e-12) * float(np.sum(np.square(raw, dtype=np.float64))))
    return float(np.max(np.abs(products[:lags]) / np.maximum(norm, 1e-12)))


def _write(ring: np.ndarray, at: int, values: np.ndarray) -> None:
    """Store ``values`` in ``ring`` from index ``at`` on (modulo its length)."""
    index = np.arange(at, at + len(values)) % len(ring)
    ring[index] = values


class TranscribingAsrSignal:
    """A Transcriber that hears each utterance through :meth:`AsrSignal.words_for`."""

    def __init__(self, inner: Transcriber, signal: AsrSignal) -> None:
        self._inner = inner
        self._signal = signal

    def transcribe(self, audio: AudioBlock, *, word_timings: bool = False) -> Transcript:
        if self._signal.only_echo(audio):
            return Transcript("")  # no words of the user's: whisper would only guess at the echo
        words = self._signal.words_for(audio)
        heard = self._inner.transcribe(words, word_timings=word_timings)
        earlier = (audio.start - words.start) / audio.rate  # word times stay relative to ``audio``
        if not earlier or not heard.words:
            return heard
        timed = tuple(TimedWord(w.text, w.start_s - earlier, w.end_s - earlier) for w in heard.words)
        return Transcript(heard.text, timed)
