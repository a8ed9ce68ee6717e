"""Where the reply's echo and a cut-in sit in what a real microphone captured, found by correlation: the
echo's lag against the canceller's reference and the speaker, where the echo ends, and each cut-in's true
reaction (device_soak.py --true-reaction), on a sound path whose clocks the engine can only estimate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.echo import EchoCanceller
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[2] / "audio"


class RecordingCanceller:
    """Keeps what the canceller was given (raw mic and its aligned reference) for a look at their lag."""

    def __init__(self, inner: EchoCanceller) -> None:
        self.inner = inner
        self.mic: list[Samples] = []
        self.reference: list[Samples] = []
        self.cleaned: list[Samples] = []  # what it passed on: the mic as the engine heard it

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        self.mic.append(mic.samples.copy())
        self.reference.append(reference.samples.copy())
        cleaned = self.inner.process(mic, reference)
        self.cleaned.append(cleaned.samples.copy())
        return cleaned

    def rest(self, mic: AudioBlock) -> AudioBlock:
        self.mic.append(mic.samples.copy())
        self.reference.append(np.zeros(mic.frames, dtype=np.float32))
        cleaned = self.inner.rest(mic)
        self.cleaned.append(cleaned.samples.copy())
        return cleaned


def echo_lag(canceller: RecordingCanceller, every_s: float = 5.0) -> list[dict[str, float]]:
    """Where the speaker's sound really was in the reference, every few seconds: 0 is aligned, and
    negative means the mic heard it before the reference had it (no canceller can remove that)."""
    mic, reference = np.concatenate(canceller.mic), np.concatenate(canceller.reference)
    window, reach = ENGINE_RATE // 2, ENGINE_RATE // 2
    lags = []
    for at in range(reach, len(mic) - window - reach, round(every_s * ENGINE_RATE)):
        heard = mic[at : at + window]
        ref = reference[at - reach : at + window + reach]
        if np.sqrt(np.mean(ref**2)) < 1e-3 or np.sqrt(np.mean(heard**2)) < 1e-3:
            continue
        corr = np.correlate(ref, heard, "valid")
        best = int(np.argmax(np.abs(corr)))
        strength = np.abs(corr[best]) / np.sqrt(np.sum(heard**2) * np.sum(ref[best : best + window] ** 2))
        if strength > 0.5:
            lags.append(
                {
                    "t_s": round(at / ENGINE_RATE, 1),
                    "lag_ms": (reach - best) / 16,
                    "strength": round(float(strength), 2),
                }
            )
    return lags


def lag_of(mic: Samples, reference: Samples, at: int, reach: int = ENGINE_RATE // 4) -> int | None:
    """Where the echo in ``mic`` just before ``at`` sits in ``reference`` (mic sample m hears reference
    sample m - lag), or None when that stretch holds too little of the speaker's sound to tell."""
    window = ENGINE_RATE // 2
    start = at - window
    if start - reach < 0 or at + reach > len(reference):
        return None
    heard = mic[start:at].astype(np.float64)
    ref = reference[start - reach : at + reach].astype(np.float64)
    if np.sqrt(np.mean(heard**2)) < 1e-3:
        return None
    corr = np.correlate(ref, heard, "valid")
    energy = np.cumsum(np.concatenate(([0.0], ref**2)))
    norm = np.sqrt(np.maximum(energy[window:] - energy[:-window], 1e-12) * np.sum(heard**2))
    scores = np.abs(corr) / norm[: len(corr)]
    best = int(np.argmax(scores))
    return reach - best if scores[best] > 0.5 else None


ECHO_WINDOW = ENGINE_RATE // 100  # 10 ms: how finely the end of the reply's echo is found


def speaker_lag(mic: Samples, speaker: Samples, at: int) -> tuple[int, float] | None:
    """Where the speaker's sound sits in the mic in the second before ``at`` (mic sample m hears speaker
    sample m - lag) and its gain there, or None when that second holds too little of it to tell."""
    window, reach = ENGINE_RATE, ENGINE_RATE
    if at - window < 0:
        return None
    heard = mic[at - window : at].astype(np.float64)
    lo = max(0, at - window - reach)
    ref = speaker[lo:at].astype(np.float64)
    if len(ref) < window or np.sqrt(np.mean(heard**2)) < 1e-3:
        return None
    size = 1 << (len(ref) + window).bit_length()
    corr = np.fft.irfft(np.fft.rfft(ref, size) * np.conj(np.fft.rfft(heard, size)), size)[
        : len(ref) - window + 1
    ]
    energy = np.cumsum(np.concatenate(([0.0], ref**2)))
    scores = corr / np.sqrt(np.maximum(energy[window:] - energy[:-window], 1e-12) * np.sum(heard**2))
    best = int(np.argmax(scores))
    if scores[best] < 0.5:
        return None
    lag = at - window - (lo + best)
    echo = ref[best : best + window]
    return lag, float(np.dot(heard, echo) / max(np.dot(echo, echo), 1e-12))


def echo_end(mic: Samples, speaker: Samples, lag: int, gain: float, cut: int) -> int | None:
    """The mic sample just after the reply's echo was last heard, from a little before ``cut`` to half a
    second after it: the last two 10 ms windows in a row whose mic holds the speaker's sound (projected
    on it, more than half of it), judged in the mic itself, so audio silenced in the device is not heard."""
    last, before = None, False
    for at in range(max(lag, cut - ENGINE_RATE // 4), min(len(mic), cut + ENGINE_RATE // 2), ECHO_WINDOW):
        echo = speaker[at - lag : at - lag + ECHO_WINDOW].astype(np.float64) * gain
        heard = mic[at : at + ECHO_WINDOW].astype(np.float64)
        loud = len(echo) == ECHO_WINDOW and np.sqrt(np.mean(echo**2)) > 3e-3
        present = loud and float(np.dot(heard, echo)) > 0.5 * float(np.dot(echo, echo))
        if present and before:
            last = at + ECHO_WINDOW
        before = present
    return last


def found_in_mic(mic: Samples, wav: Samples, clock: int) -> tuple[int, float] | None:
    """Where the WAV played at ``clock`` (mic clock) lies in ``mic`` (from half a second before to 3 s after),
    by normalized correlation, and how well it matches there (1: exactly); None past the mic's end."""
    rate = ENGINE_RATE
    lo, hi = max(0, clock - rate // 2), min(len(mic), clock + 3 * rate + len(wav))
    if hi - lo <= len(wav):
        return None
    seen, said = mic[lo:hi].astype(np.float64), wav.astype(np.float64)
    size = 1 << (len(seen) + len(said)).bit_length()
    corr = np.fft.irfft(np.fft.rfft(seen, size) * np.conj(np.fft.rfft(said, size)), size)
    corr = corr[: len(seen) - len(said) + 1]  # corr[k] pairs said[n] with seen[k + n]
    energy = np.cumsum(np.concatenate(([0.0], seen**2)))
    windows = energy[len(said) :] - energy[: -len(said)]
    scores = np.abs(corr) / np.sqrt(np.maximum(windows, 1e-12) * np.sum(said**2))
    return lo + int(np.argmax(scores)), float(scores.max())


def true_reactions(
    cut_ins: list[tuple[str, int]],
    canceller: RecordingCanceller,
    manifest: dict[str, dict[str, Any]],
    cuts: list[int],
    speaker: Samples,
    heard_to: dict[int, int | None],
) -> list[dict[str, Any]]:
    """Each cut-in (its WAV's name and the mic clock it was played at) measured in what the mic really
    captured: the WAV found in it by correlation (its speech onset), the block where the engine paused the
    reply for it (``cuts``, mic clock), and the last of the reply's sound reaching the mic (the reference's
    last sound within half a second, moved by the lag the echo really had). ``queued_ms`` is the audio still
    played after the block that paused it.

    ``end`` is where the reply's echo is last heard in the mic itself (:func:`echo_end`, against all
    the speaker was handed); the ``_ref`` figures take the last sound of the canceller's reference
    instead. ``heard_gap_ms``: how much of the reply reached the mic beyond what the buffer counts as
    played (by ``heard_to``, the speaker clock just after its last played sample, 0.3 s after the
    pause): positive is heard but not counted, negative counted but never heard."""
    mic, reference = np.concatenate(canceller.mic), np.concatenate(canceller.reference)
    rate, rows = ENGINE_RATE, list[dict[str, Any]]()
    for name, clock in cut_ins:
        wav = read_wav(Path(manifest[name].get("path", AUDIO / name))).samples
        where = found_in_mic(mic, wav, clock)
        if where is None:
            continue
        found, match = where
        onset = found + round(manifest[name]["start_s"] * rate)
        cut = next((c for c in cuts if c > onset), None)
        if cut is None or cut - onset > 2 * rate:
            rows.append({"wav": name, "match": round(match, 2), "cut": None})
            continue
        lag = lag_of(mic, reference, onset)
        # a false barge-in resumes the reply, a cut-in's answer begins, well over half a second later
        sound = np.flatnonzero(np.abs(reference[: cut + rate // 2]) > 1e-3)
        end_ref = None if lag is None or not len(sound) else int(sound[-1]) + lag
        found_lag = speaker_lag(mic, speaker, onset)
        end = None if found_lag is None else echo_end(mic, speaker, *found_lag, cut)
        counted = heard_to.get(cut)
        gap = None if end is None or found_lag is None or counted is None else end - found_lag[0] - counted
        ms = lambda samples: None if samples is None else round(samples * 1000 / rate)  # noqa: E731
        rows.append({
            "wav": name, "match": round(match, 2), "echo_lag_ms": ms(lag),
            "detection_ms": ms(cut - onset),
            "queued_ms": ms(None if end is None else end - cut),
            "reaction_ms": ms(None if end is None else end - onset),
            "queued_ref_ms": ms(None if end_ref is None else end_ref - cut),
            "reaction_ref_ms": ms(None if end_ref is None else end_ref - onset),
            "heard_gap_ms": ms(gap),
        })  # fmt: skip
    return rows
