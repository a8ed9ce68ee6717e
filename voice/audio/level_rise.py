"""A voice louder than the one going on: the person at the mic starting to talk over a television.

While another voice is overheard (voice/engine/speaker_check.py), the speaker's own cut-in is found in its
one-second windows, 0.4 to 1.3 s after it begins. The speaker talks to the mic from nearer than a
television or a chat across the room, so their voice arriving lifts the level well above the overheard
voice's: a rise sustained for ``RISE_S`` is a voice to pause the reply for at once, as the first 100 ms of
speech over a reply are; the speaker verdict on it then cuts the reply or resumes it.

Tuned on two held-out-from-speaker-tuning real readers as the television (A Tale of Two Cities, Endgame,
reverberated) with eleven users 6 and 12 dB over it (`benchmarks/speaker_room.py` reports it on others):
the 90th percentile of the last 2 s as the overheard level and a rise of 7 dB found 89 % of the users,
median 200 ms after their onset, and rose on its own 1.5-2 times a minute of those readers (a pause of the
reply of under a second each, as the television's own start costs); 6 dB found all, but 4-9 times a minute.

The overheard level is taken over 6 s, not 2: on a real sound path the echo canceller holds a television
down with the reply's echo for seconds at a time and lets it back in the reply's pauses, which over 2 s
looked like a voice rising. On the PulseAudio null sink through AEC3 (`benchmarks/device_soak.py
--television 12`, 6 min runs, AMD EPYC Zen 4), twice each: the reply paused for the television 36 times in
11.8 min over 2 s, 24 in 11.6 over 6 s, and 3 of 10 cut-ins took longer than 300 ms to stop it (the
slowest 1.65 s), 1 of 15 over 6 s (345 ms). On a pair it was not chosen on (another reader, another user,
side by side) the pauses halved too (32 -> 17, and a reply the television cut, none), but the cut-ins were
stopped later (median 271 -> 307 ms; over 300 ms 1 of 5 -> 4 of 6). Users 12 dB over a television are found
as soon in the virtual room; 6 dB over it, fewer at once (real held-out voices: 15 of 32 within 300 ms over
2 s, 11 over 6 s; the rest in the windows).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from voice.audio.block import AudioBlock

FRAME_S = 0.01
REFERENCE_S = 6.0  # the overheard voice's level: its loud frames over this much of its recent past
MIN_REFERENCE_S = 1.0  # less than this heard of it, and its level is not known well enough to rise above
REFERENCE_PERCENTILE = 90  # its loud frames, not its peak: one shouted word would hide every cut-in
RISE_S = 0.1  # a rise lasting this long, as the barge-in pause waits for this much speech
RISE_DB = 7.0


class LevelRise:
    """The level of the voice heard so far, and the first ``RISE_S`` that rise ``RISE_DB`` above it.

    Blocks need not follow each other: only the voice's own blocks are given, across its pauses; ``reset``
    when another voice is to be followed."""

    def __init__(self, rate: int) -> None:
        self._frame = round(FRAME_S * rate)
        self._rise_frames = round(RISE_S / FRAME_S)
        self._least_frames = round(MIN_REFERENCE_S / FRAME_S)
        self._db: deque[float] = deque(maxlen=round(REFERENCE_S / FRAME_S) + self._rise_frames)
        self._left = np.zeros(0, np.float32)  # samples short of a whole frame, for the next block
        self._next: int | None = None  # the clock sample of the next whole frame

    def reset(self) -> None:
        self._db.clear()
        self._left = np.zeros(0, np.float32)
        self._next = None

    def hear(self, block: AudioBlock) -> int | None:
        """Take ``block``; returns the sample where a rise that lasted ``RISE_S`` began, or None."""
        if self._next is None or self._next + len(self._left) != block.start:
            self._left = np.zeros(0, np.float32)  # a gap (the voice paused): its level so far still holds
            self._next = block.start
        samples = np.concatenate([self._left, block.samples.astype(np.float32, copy=False)])
        whole = len(samples) // self._frame
        frames = samples[: whole * self._frame].reshape(whole, self._frame).astype(np.float64)
        self._left = samples[whole * self._frame :]
        rise: int | None = None
        for power in (frames**2).mean(axis=1):
            self._db.append(10.0 * float(np.log10(power + 1e-12)))
            self._next += self._frame
            if rise is None and self._rose():
                rise = self._next - self._rise_frames * self._frame
        return rise

    def _rose(self) -> bool:
        if len(self._db) < self._least_frames + self._rise_frames:
            return False
        levels = np.fromiter(self._db, np.float64)
        before, recent = levels[: -self._rise_frames], levels[-self._rise_frames :]
        reference = float(np.percentile(before, REFERENCE_PERCENTILE))
        now = 10.0 * float(np.log10(np.mean(10.0 ** (recent / 10.0))))
        return now >= reference + RISE_DB
