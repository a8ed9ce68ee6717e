"""How far the speaker's echo lags its reference, so the linear canceller models a short tail, not the delay.

An adaptive filter long enough to reach an echo 300 ms late converges slowly (Speex's 400 ms filter
removed only 1-5 dB of such an echo in its first three seconds of speech, and the user who cut in
five seconds into a story was still misheard). The bulk delay is easy to find instead: the mic
correlates with the reference best at the echo's lag. :class:`EchoDelay` measures it every half
second while the speaker plays, and hands the canceller the reference that much later, less a
margin, so its filter needs only the room's tail around that lag. The same looks tell when no echo
loud enough to hear reaches the mic (a headset, a speaker turned right down): ``no_echo``.
"""

from __future__ import annotations

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples

MAX_DELAY_MS = 400  # echo delays up to 300 ms, plus the reference's lead on devices
WINDOW_MS = 1500  # mic audio correlated with the reference at each look
EVERY_MS = 500
MARGIN_MS = 30  # the reference still leads the echo by this much: jitter, and the filter's causal start
MIN_CORRELATION = 0.4  # a weaker peak (double talk, noise, a silent speaker) is no measurement
AGREE_MS = 4  # two looks this close in a row are a measurement
MOVE_MS = 100  # an echo this far into the filter's tail, or nearer its start than a third of the margin,
# moves the reference; closer lags are left to the filter, since every move makes it learn the room again
AUDIBLE = 1e-4  # reference RMS above this (-80 dBFS) is sound the mic may pick up
HEARD_ECHO_DBFS = -55.0  # echo quieter than this is none: 10 dB under the VAD's floor over a reply
NO_ECHO_LOOKS = 3  # this many looks in a row finding none (2 s of the speaker's sound): no echo path
NO_ECHO_PLAYING = 0.25  # a look tells only if the speaker played in this share of its window


class EchoDelay:
    """Delays the reference to where its echo sits in the mic, less MARGIN_MS, as measured lately.

    ``delay`` is the shift in samples applied now; ``moves`` counts its changes (each one makes the
    canceller learn the room again).
    """

    def __init__(self, rate: int = ENGINE_RATE) -> None:
        self.rate = rate
        self.delay = 0
        self.moves = 0
        self._reach = MAX_DELAY_MS * rate // 1000
        self._window = WINDOW_MS * rate // 1000
        self._every = EVERY_MS * rate // 1000
        self._margin = MARGIN_MS * rate // 1000
        self._agree = AGREE_MS * rate // 1000
        self._move = MOVE_MS * rate // 1000
        # rings, so a block costs its own copy, not one of the whole 1.9 s looked at every EVERY_MS
        self._mic = _Ring(self._window)
        self._reference = _Ring(self._window + self._reach)
        self._since = 0
        self._candidate: int | None = None
        self._frame = rate // 100  # 10 ms, for the share of the window the speaker played in
        self._found_none = 0  # telling looks in a row that found no echo
        self.no_echo = False

    def align(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        """The reference for ``mic``'s span, moved later by ``delay``; measures the lag now and then."""
        frames = mic.frames
        if frames > self._window:  # longer than what is kept: only its end is looked at
            return self._align_long(mic, reference)
        self._mic.add(mic.samples)
        self._reference.add(reference.samples)
        self._since += frames
        if self._since >= self._every:
            self._since = 0
            self._look()
        samples = self._reference.last(frames + self.delay)[:frames]  # delay <= reach: always kept
        return AudioBlock(samples, reference.rate, reference.start)

    def _align_long(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        history = np.concatenate(
            (self._reference.last(self._reference.size), reference.samples.astype(np.float32))
        )
        for ring, samples in ((self._mic, mic.samples), (self._reference, reference.samples)):
            ring.add(samples[-ring.size :])
        self._since = 0
        self._look()
        start = len(history) - mic.frames - self.delay
        return AudioBlock(history[start : start + mic.frames], reference.rate, reference.start)

    def _look(self) -> None:
        reference, mic = self._reference.last(self._reference.size), self._mic.last(self._mic.size)
        match = echo_match(reference, mic, self._reach)
        self._judge_echo(reference[-len(mic) :], mic, 0.0 if match is None else match[1])
        if match is None:
            return
        lag, score = match
        if score < MIN_CORRELATION:
            return
        if self._candidate is None or abs(lag - self._candidate) > self._agree:
            self._candidate = lag  # one look is a guess: the next must agree
            return
        offset = min(lag, self._candidate) - self.delay  # where the echo sits in the filter now
        if self._margin // 3 <= offset <= self._move:
            return  # inside the filter's tail, clear of its start: left to the filter
        delay = max(0, min(lag, self._candidate) - self._margin)
        if delay != self.delay:
            self.delay = delay
            self.moves += 1

    def _judge_echo(self, reference: Samples, mic: Samples, score: float) -> None:
        """``no_echo`` once NO_ECHO_LOOKS looks in a row at the speaker playing found no echo loud
        enough to hear, until one finds one: its level is the mic's, times the share of it that matches
        the reference (the correlation squared), over the time the speaker played. A user talking over
        the echo adds to the mic what they take from that share, so they do not hide it."""
        frames = reference[: len(reference) // self._frame * self._frame].reshape(-1, self._frame)
        playing = float(np.mean(np.einsum("ij,ij->i", frames, frames) > AUDIBLE**2 * self._frame))
        if playing < NO_ECHO_PLAYING:
            return  # a pause, or the reply's first words: too little to say
        echo_power = score**2 * float(np.mean(np.square(mic, dtype=np.float64))) / playing
        if echo_power < 10 ** (HEARD_ECHO_DBFS / 10):
            self._found_none += 1
            self.no_echo = self.no_echo or self._found_none >= NO_ECHO_LOOKS
        elif score >= MIN_CORRELATION:
            self.no_echo, self._found_none = False, 0  # a lag measured, of an echo loud enough to hear
        else:
            self._found_none = 0  # a faint match over a voice: not enough to say either way


def echo_lag(reference: Samples, mic: Samples, reach: int) -> int | None:
    """The lag (0..reach samples) at which ``mic`` best matches the end of ``reference``, or None when
    the best normalised correlation is below MIN_CORRELATION. ``reference`` is ``reach`` samples
    longer than ``mic`` and ends where it ends."""
    match = echo_match(reference, mic, reach)
    return None if match is None or match[1] < MIN_CORRELATION else match[0]


def echo_match(reference: Samples, mic: Samples, reach: int) -> tuple[int, float] | None:
    """The lag (0..reach samples) at which ``mic`` best matches the end of ``reference`` and that
    match's normalised correlation (0..1); None when either is silent. Shapes as in :func:`echo_lag`."""
    mic64 = mic.astype(np.float64)
    energy_mic = float(np.sum(np.square(mic64)))
    if energy_mic <= 1e-9 or float(np.sum(np.square(reference, dtype=np.float64))) <= 1e-9:
        return None  # a silent speaker has no echo to find: no FFTs while the assistant listens
    size = 1 << (len(reference) + len(mic)).bit_length()
    products = np.fft.irfft(np.fft.rfft(reference, size) * np.conj(np.fft.rfft(mic64, size)), size)
    # products[k] pairs mic[n] with reference[n + k]; lag L means mic[n] hears reference[n + reach - L]
    shifts = np.arange(reach + 1)
    energy = np.cumsum(np.concatenate(([0.0], np.square(reference.astype(np.float64)))))
    windows = energy[shifts + len(mic)] - energy[shifts]
    norm = np.sqrt(np.maximum(windows, 1e-12) * energy_mic)
    scores = np.abs(products[: reach + 1]) / norm  # a speaker wired the other way round inverts it
    best = int(np.argmax(scores))
    if windows[best] <= 1e-9:
        return None
    return reach - best, float(scores[best])


class _Ring:
    """The latest ``size`` samples (zeros before any), added block by block without moving the rest."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data = np.zeros(size, dtype=np.float32)
        self._end = 0  # where the next sample goes

    def add(self, samples: Samples) -> None:
        """Append ``samples`` (at most ``size`` of them)."""
        at = self._end
        first = min(len(samples), self.size - at)
        self._data[at : at + first] = samples[:first]
        self._data[: len(samples) - first] = samples[first:]
        self._end = (at + len(samples)) % self.size

    def last(self, count: int) -> Samples:
        """The latest ``count`` samples, oldest first (a copy)."""
        start = (self._end - count) % self.size
        if start + count <= self.size:
            return self._data[start : start + count].copy()
        return np.concatenate((self._data[start:], self._data[: self._end]))
