"""What ASR hears of an utterance: the mic with the echo subtracted linearly, from where the user began.

Two things damaged the words of a user who talks over the assistant (measured with the echo sweep):
AEC3's double-talk suppression, and the utterance's start. The VAD listens to AEC3's output, which
mutes the start of speech over the assistant, so it finds the onset up to 1.2 s late and the VAD's
pre-roll no longer reaches back to the first word ("Sorry, I meant on Sunday." became "I'm Anton
Sunnade." even from the user's voice alone). :class:`AsrSignal` keeps the mic run through a linear
canceller (Speex's MDF: it subtracts the echo and suppresses nothing) by clock sample, and ASR
(``voice.asr.echo_free``) hears that signal for each utterance the VAD cut; when the speaker was
audible at its start, from where the user's voice began in it, up to ``DOUBLE_TALK_REACH_MS``
earlier (not from a fixed point: whisper turns residual echo into words). ASR hears one continuous
signal, never a switch from one canceller's output to another's mid-word.

The VAD and the echo judgement need no echo, so they hear AEC3's output; but where the speaker may be
heard, :meth:`AsrSignal.for_vad` puts the linear output in its place in the frames where a residual-echo
gate finds the user there (AEC3 muted all but ~0.25 s of a cut-in over a loud reply, which was then
judged a scrap of echo, and its onset came late), and in every frame when no echo reaches the mic at
all (AEC3 muted a headset user over quiet room noise whole, and the reply went on).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.echo_delay import AUDIBLE, MAX_DELAY_MS, EchoDelay
from voice.audio.linear_echo import TAIL_MS, SpeexEchoCanceller
from voice.audio.vad import DEFAULT_BARGE_IN

KEPT_SECONDS = 40  # longer than the longest utterance (30 s) plus the VAD's pre-roll and the reach
FRAME_MS = 10
ECHO_TAIL_MS = 400  # echo may reach the mic this long after the reference played (delay, lead, room)
ECHO_ONLY = 0.97  # raw mic this alike to the speaker's own sound (normalised correlation) holds no user
DOUBLE_TALK_REACH_MS = 1000  # the VAD's pre-roll plus this covers its late onsets under AEC3 (up to 1.2 s)
ONSET_FRAME_MS = 20
USER_KEPT_DB = -6.0  # a frame where the canceller kept more of the mic than this holds the user's voice
USER_LEVEL_DBFS = -55.0  # and is louder than this
ONSET_GAP_MS = 200  # a pause in the user's voice longer than this ends the search back for its start
ONSET_MARGIN_MS = 100  # start this much before the first frame found: the soft start of a word
SAME_CUT_FRAMES = 3  # an onset known to the ms finds its utterance's span within this many frames
SPANS_KEPT = 8  # the latest utterances transcribed: a reach back stops at the end of the one before
GATE_HISTORY_MS = 2000  # the canceller's echo loss is the median over this much of the speaker's sound
GATE_MIN_MS = 500  # and needs this much of it since the echo path last moved, else the gate stays shut
GATE_ABOVE_DB = 12.0  # a frame the canceller kept this much more of than it keeps of echo holds the user
GATE_HEARD_DBFS = -55.0  # quieter mic frames tell nothing about the echo loss
GATE_MOST_KEPT_DB = 1.0  # a linear output louder than the mic is a diverged filter adding echo, not the user
LEARNED_MS = 4000  # the speaker's sound a live filter needs to cancel well (loop: 5 dB at 1.5 s, 25 at 4.5 s)
RELEARN_PASSES = 3  # a young filter's span is cancelled again by a fresh one, run this often over it
RELEARN_HISTORY_MS = 5000  # at most this much before the span's reach (a bound on the hindsight's cost)


class AsrSignal:
    """The mic with the echo subtracted linearly, the raw mic and the reference, for the last
    ``KEPT_SECONDS``, and per 10 ms whether the speaker was audible.

    ``add`` runs where the mic blocks are handled; ``words_for`` and ``only_echo`` on the ASR worker.
    """

    def __init__(
        self,
        rate: int = ENGINE_RATE,
        canceller: SpeexEchoCanceller | None = None,
        relearner: Callable[[int], SpeexEchoCanceller] | None = SpeexEchoCanceller,
    ) -> None:
        self.rate = rate
        self._canceller = canceller or SpeexEchoCanceller(rate)
        self._relearner = relearner  # a fresh canceller for a young filter's spans; None hears the live one
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
        self._user = np.zeros(
            len(self._audible), dtype=bool
        )  # per frame: the gate let the linear output through
        self._echo_loss: deque[float] = deque(maxlen=GATE_HISTORY_MS // FRAME_MS)  # kept/heard, dB
        self._gate_min = GATE_MIN_MS // FRAME_MS
        self._last_energy = (0.0, 0.0)  # the last frame's linear output and mic energy
        self._quiet = 0  # 10 ms frames since the reference was last audible
        self._settled = (MAX_DELAY_MS + TAIL_MS + ECHO_TAIL_MS) // FRAME_MS
        self._learning_from: int | None = None  # where the live filter last began learning (a start, a move)
        self._learned_frames = 0  # 10 ms frames of the speaker's sound it has filtered since
        self._learned_at: int | None = None  # the sample by which that reached LEARNED_MS
        self._learning_delay = 0  # EchoDelay's shift of the reference since then
        self._lock = threading.Lock()

    def add(self, mic: AudioBlock, reference: AudioBlock, realigned: bool = False) -> None:
        """The raw ``mic`` block and the reference the echo canceller got for it (whole 10 ms frames);
        ``realigned`` if that reference was just moved against the mic (the canceller must learn again)."""
        moves = self._delay.moves
        aligned = self._delay.align(mic, reference)
        if self._delay.moves != moves:
            self._canceller.reset()  # what it learned belongs to the old lag
        if realigned or self._delay.moves != moves:
            self._echo_loss.clear()  # the loss measured before belongs to the old echo path
        frames = reference.samples.reshape(-1, self._frame)
        loud = np.einsum("ij,ij->i", frames, frames) > AUDIBLE**2 * self._frame  # RMS above AUDIBLE
        self._quiet = 0 if loud.any() else self._quiet + len(loud)
        # the speaker silent for longer than any echo lasts: the linear output would be the mic itself,
        # and the gate finds no user where the speaker cannot be heard (most of idle listening's cost)
        quiet = self._quiet > self._settled and not realigned and self._delay.moves == moves
        words = (self._canceller.skip(mic) if quiet else self._canceller.process(mic, aligned)).samples
        with self._lock:
            if self._learning_from is None or self._delay.moves != moves:
                # the lag first found moves no echo: what came before it is the same room's, taken at that lag
                found = self._learning_from is not None and moves == 0
                self._learning_from = self._learning_from if found else mic.start
                self._learned_frames, self._learned_at = 0, None
                self._learning_delay = self._delay.delay
            if not quiet and self._learned_at is None:
                self._learned_frames += int(np.count_nonzero(loud))
                if self._learned_frames * FRAME_MS >= LEARNED_MS:
                    self._learned_at = mic.end
            _write(self._words, mic.start, words)
            _write(self._raw, mic.start, mic.samples)
            _write(self._reference, mic.start, reference.samples)
            _write(self._audible, mic.start // self._frame, loud)
            self._end = mic.end
            self._first = mic.start if self._first is None else self._first
            if quiet:
                user = np.zeros(len(loud), dtype=bool)
                last = np.square(mic.samples[-self._frame :], dtype=np.float64).sum()
                self._last_energy = (float(last), float(last))
            else:
                user = self._gate(mic.start // self._frame, words, mic.samples)
            _write(self._user, mic.start // self._frame, user)

    @property
    def speaker_long_silent(self) -> bool:
        """Has the speaker been silent for longer than any echo of it lasts?"""
        return self._quiet > self._settled

    def _gate(self, first: int, words: Samples, raw: Samples) -> np.ndarray:
        """Per 10 ms frame from ``first``: does the linear output hold the user, not residual echo?

        Where the speaker may be heard, a frame holds the user when the canceller kept GATE_ABOVE_DB
        more of the mic than it keeps of the echo (the median over the speaker's recent sound: echo
        loses 10-30 dB to a converged filter, a user talking over it far less). A filter still learning
        keeps most of the echo, so its median is high and the gate stays shut. Where no echo loud enough
        to hear reaches the mic (a headset, a speaker turned down: EchoDelay finds none), that median is
        of the room's noise, which the filter cannot take either: every frame is passed, as with no echo
        canceller. (lock held)
        """
        frames = len(words) // self._frame
        kept = np.square(words.reshape(frames, self._frame), dtype=np.float64).sum(axis=1)
        heard = np.square(raw.reshape(frames, self._frame), dtype=np.float64).sum(axis=1)
        # each 10 ms frame measured with the one before it: 20 ms, as the VAD hears (10 ms alone is too noisy)
        kept_20 = kept + np.concatenate(([self._last_energy[0]], kept[:-1]))
        heard_20 = heard + np.concatenate(([self._last_energy[1]], heard[:-1]))
        self._last_energy = (float(kept[-1]), float(heard[-1]))
        loss = 10.0 * np.log10((kept_20 + 1e-12) / (heard_20 + 1e-12))
        loud = heard_20 > 2 * self._frame * 10 ** (GATE_HEARD_DBFS / 10)
        user = np.zeros(frames, dtype=bool)
        no_echo = self._delay.no_echo
        for index in range(frames):
            if not self._was_audible_frame(first + index):
                continue
            if loud[index]:
                self._echo_loss.append(float(loss[index]))
            if no_echo:  # nothing of the speaker reaches the mic: the mic holds only the room and the user
                user[index] = loss[index] <= GATE_MOST_KEPT_DB
            elif len(self._echo_loss) >= self._gate_min:
                above = loss[index] > float(np.median(self._echo_loss)) + GATE_ABOVE_DB
                user[index] = above and loss[index] <= GATE_MOST_KEPT_DB
        return user

    def _was_audible_frame(self, frame: int) -> bool:
        """Could the speaker be heard in 10 ms frame ``frame``? (lock held)"""
        return bool(
            np.any(np.take(self._audible, np.arange(max(0, frame - self._tail), frame + 1), mode="wrap"))
        )

    def for_vad(self, cleaned: AudioBlock) -> AudioBlock:
        """What the VAD and the echo judgement hear over ``cleaned`` (AEC3's output): AEC3 where the speaker
        may be heard, except where the gate found the user in the linear output, which then replaces it.

        AEC3 mutes double talk, so over a loud reply the VAD heard a fraction of the user who cut in (late,
        and too short to be taken for more than a scrap of echo); the linear output keeps the user whole,
        and the gate keeps its residual echo out. Away from the speaker AEC3's output is used as it is.
        """
        if cleaned.frames == 0 or self._quiet > self._settled:  # no user found where no echo can be
            return cleaned
        with self._lock:
            if self._end is None or cleaned.end > self._end or cleaned.start < self._end - len(self._words):
                return cleaned
            first, last = cleaned.start // self._frame, -(-cleaned.end // self._frame)
            user = np.take(self._user, np.arange(first, last), mode="wrap")
            if not np.any(user):
                return cleaned
            positions = np.arange(cleaned.start, cleaned.end)
            take = np.repeat(user, self._frame)[positions - first * self._frame]
            samples = np.where(take, np.take(self._words, positions, mode="wrap"), cleaned.samples)
        return AudioBlock(samples.astype(np.float32), cleaned.rate, cleaned.start)

    def words_for(self, utterance: AudioBlock) -> AudioBlock:
        """The linear canceller's output over ``utterance``; if the speaker was audible as it began,
        from where the user's voice really began, up to DOUBLE_TALK_REACH_MS earlier (never back into
        the utterance before it). The utterance as the VAD cut it if that audio is no longer kept."""
        heard = self._heard(utterance.start, utterance.end, mark=True)
        return utterance if heard is None else heard

    def words_heard(self, onset: int, end: int) -> AudioBlock | None:
        """The linear output ASR hears of the utterance whose voice began at about ``onset`` (a stream
        event's time, to the ms), from where ``words_for`` begins it up to ``end``; None if that audio
        is no longer kept."""
        pre_roll = DEFAULT_BARGE_IN.pre_roll_ms * self.rate // 1000
        slack = self._frame * SAME_CUT_FRAMES
        with self._lock:
            if self._end is None:
                return None
            end = min(end, self._end)
            cut = [s for s, _ in self._spans if onset - pre_roll - slack <= s <= onset + slack]
        # the VAD's cut as ASR was given it (its pre-roll stops at the utterance before), if given yet
        return self._heard(min(cut, default=max(0, onset - pre_roll)), end, mark=False)

    def _heard(self, start: int, end: int, mark: bool) -> AudioBlock | None:
        """The linear output ASR hears of the utterance cut over [``start``, ``end``), from where its
        voice began; None if not kept. A span the live filter was still young for is cancelled again
        in hindsight by a fresh filter (``_relearn_job``), off the lock: the mic's blocks are not held up.
        ``mark`` records the span as transcribed (a later reach back stops at its end)."""
        relearner = self._relearner
        with self._lock:
            job = None if relearner is None else self._relearn_job(start, end)
        fresh = None
        if relearner is not None and job is not None:
            mic, far = job
            fresh = (mic.start, relearner(self.rate).in_hindsight(mic, far, RELEARN_PASSES).samples)
        with self._lock:
            began = self._began(start, end, fresh)
            if began is None:
                return None
            if mark and (start, end) not in self._spans:
                self._spans.append((start, end))
            words = self._linear(began, max(began, end), fresh)
        return AudioBlock(words.astype(np.float32), self.rate, began)

    def _relearn_job(self, start: int, end: int) -> tuple[AudioBlock, AudioBlock] | None:
        """What a fresh filter needs to cancel [``start`` less the reach, ``end``) in hindsight: from where
        the live one began learning, the raw mic and the reference it was given (moved as it was); None
        when the live filter had heard LEARNED_MS of the speaker by then, or the speaker is not in it.
        (lock held)"""
        if self._learning_from is None or self._end is None or self._first is None or end > self._end:
            return None
        reach_from = start - self._reach
        if self._learned_at is not None and reach_from >= self._learned_at:
            return None
        if not self._was_audible(max(reach_from, self._learning_from), end):
            return None
        kept_from = max(self._first, self._end - len(self._words), self._learning_from)
        audible = np.flatnonzero(
            np.take(self._audible, np.arange(kept_from // self._frame, -(-end // self._frame)), mode="wrap")
        )
        first_frame = kept_from // self._frame + (int(audible[0]) if len(audible) else 0)
        # from a filter's length before the speaker's first sound (the filter starts on silence), whole frames
        history_from = max(
            kept_from,
            first_frame * self._frame - TAIL_MS * self.rate // 1000,
            reach_from - RELEARN_HISTORY_MS * self.rate // 1000,
        )
        history_from = end - (end - history_from) // self._frame * self._frame
        if history_from >= end:
            return None
        shift = self._learning_delay
        raw = np.take(self._raw, np.arange(history_from, end), mode="wrap")
        reference = np.take(self._reference, np.arange(history_from - shift, end - shift), mode="wrap")
        return AudioBlock(raw, self.rate, history_from), AudioBlock(reference, self.rate, history_from)

    def _linear(self, start: int, end: int, fresh: tuple[int, Samples] | None) -> Samples:
        """The linear output over [``start``, ``end``): the hindsight one where it covers it. (lock held)"""
        words = np.take(self._words, np.arange(start, end), mode="wrap")
        if fresh is not None:
            fresh_from, fresh_words = fresh
            first = max(start, fresh_from)
            last = min(end, fresh_from + len(fresh_words))
            if first < last:
                words[first - start : last - start] = fresh_words[first - fresh_from : last - fresh_from]
        return words

    def _began(self, start: int, end: int, fresh: tuple[int, Samples] | None = None) -> int | None:
        """Where ASR hears the utterance cut over [``start``, ``end``) begin; None if not kept. ``fresh``
        is a hindsight linear output to look in. (lock held)"""
        if self._end is None or self._first is None or end > self._end:
            return None
        kept_from = max(self._first, self._end - len(self._words))
        if start < kept_from:
            return None
        onset = min(end, start + DEFAULT_BARGE_IN.pre_roll_ms * self.rate // 1000)
        before = [e for s, e in self._spans if s < start]
        reach_from = max(start - self._reach, kept_from, max(before, default=kept_from))
        # not from before the speaker's sound began: a voice there, with no echo to mute it, the VAD hears in
        # time; the silence before a reply makes the echo's own start look like the user's to user_onset
        reach_from = self._after_echo_free(reach_from, onset)
        if reach_from < start and self._was_audible(reach_from, onset):
            span = np.arange(reach_from, onset)
            began = user_onset(
                self._linear(reach_from, onset, fresh), np.take(self._raw, span, mode="wrap"), self.rate
            )
            if began is not None:
                return min(start, reach_from + began)
        return start

    def _after_echo_free(self, start: int, end: int) -> int:
        """``start``, or the end of the last 10 ms frame in [``start``, ``end``) that no echo could reach.
        (lock held)"""
        first, last = start // self._frame, -(-end // self._frame)
        if last <= first:
            return start
        frames = np.arange(first - self._tail, last)
        audible = np.take(self._audible, frames, mode="wrap")
        # a frame echo can reach: the speaker audible in it or in the ECHO_TAIL_MS before it
        reachable = np.convolve(audible, np.ones(self._tail + 1, dtype=int), mode="valid") > 0
        free = np.flatnonzero(~reachable)
        return start if len(free) == 0 else max(start, (first + int(free[-1]) + 1) * self._frame)

    def _was_audible(self, start: int, end: int) -> bool:
        """Did the speaker play anything that could reach the mic in [start, end)? (lock held)"""
        first = max(0, start // self._frame - self._tail)
        frames = np.arange(first, max(first, -(-end // self._frame)))
        return bool(np.any(np.take(self._audible, frames, mode="wrap")))

    def speaker_audible_over(self, audio: AudioBlock) -> bool:
        """Could the speaker's sound be in ``audio`` (a cut-in over the reply, or its echo tail)?"""
        with self._lock:
            if self._end is None:
                return False
            return self._was_audible(audio.start, audio.end)

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
    start = at % len(ring)
    first = min(len(values), len(ring) - start)
    ring[start : start + first] = values[:first]
    ring[: len(values) - first] = values[first:]
