"""Full-Duplex-Bench v1's turn-taking metrics (Lin et al., 2025), computed on a run's speaker.wav.

Read from FDB's evaluation code (github.com/DanielLin94144/Full-Duplex-Bench, v1_v1.5/evaluation and
get_transcript), not copied. There the model's output.wav is as long as the user's input.wav and an ASR
with word times (parakeet-tdt-0.6b-v2) transcribes it; the user's side is known from the data's annotations.
Here speaker.wav is the output (what the assistant played, on mic.wav's clock) and the user's side comes
from where the room placed each clip (report.json's ``user_audio``) and the clip's measured speech span.

- **Takes the turn** (FDB's eval_pause_handling / eval_smooth_turn_taking / eval_user_interruption): the
  words of a stretch of output take the turn unless there are none, or they span under 1 s and are at most
  3 words (a backchannel); :func:`takes_turn`. The turn-over rate (TOR) is its mean over the cases.
- **Pause handling**: TOR over the output while the user holds the floor. FDB's output is as long as its
  input, which ends just after the pause; here the window ends where the user's last word ends.
- **Smooth turn-taking**: TOR over the whole output; latency is the first word's start less the end of
  the user's turn, a negative one counted 0, averaged over the cases that took the turn.
- **User interruption**: only the output after the end of the interruption counts (FDB crops output.wav
  there before its ASR); TOR and latency as for smooth turn-taking. FDB scores relevance with GPT-4-turbo;
  we have no judge, so ``answered`` says whether the words after it are the scripted answer to the
  interruption (words only that answer has) rather than the old reply going on. Ours too: ``stop_ms``,
  the interruption's onset to the old reply's silence, and ``went_on``, whether the old reply's own words
  played on after it (as for a backchannel, below).
- **Backchannel**: FDB's task is the model backchannelling while the user talks; issue 36's is the user
  backchannelling over the assistant's reply, which FDB's v1 code has no task for. We keep its rule: a
  backchannel took the turn when the output after it holds a new turn by :func:`takes_turn`, counting only
  the words of the reply a new request gets (the story going on is no turn-over). Ours too: ``went_on``,
  whether the story's own words played on after it (a reply cut with no new one is no turn-over, but no
  success either), and ``gap_ms``, the silence the backchannel caused, from the last sound before it to
  the first after (speaker.wav).

Every level is in 10 ms frames: a frame sounds at -45 dBFS RMS or more (audio/make_fixtures.py's
``ACTIVE_DBFS``). The old reply is stopped at the first silence of ``STOPPED_S`` or more: piper's own pauses
at a full stop last up to about 0.36 s. Whisper is not run over silence (it may invent words there).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

RATE = 16_000
FRAME = RATE // 100
SOUNDING_DBFS = -45.0
TURN_S = 1.0  # FDB's turn_duration_threshold
TURN_WORDS = 3  # FDB's turn_num_words_threshold
STOPPED_S = 0.5  # a silence this long after an interruption's onset: the reply was stopped
LEAD_S = 0.02  # silence whisper is given before a stretch's first sound
GAP_SEARCH_S = 1.0  # a backchannel's gap begins within this long of its onset (the pause's reaction)

Samples = npt.NDArray[np.floating[Any]]


@dataclass(frozen=True)
class Word:
    """A word the ASR heard in the output, in seconds on speaker.wav's clock."""

    text: str
    start_s: float
    end_s: float


# The words of ``samples`` (a stretch of speaker.wav) with times from its first sample.
Transcribe = Callable[[Samples], list[Word]]


def takes_turn(words: Sequence[Word]) -> bool:
    """FDB's rule: no words, or under ``TURN_S`` and at most ``TURN_WORDS`` of them, is no turn."""
    if not words:
        return False
    return words[-1].end_s - words[0].start_s >= TURN_S or len(words) > TURN_WORDS


def frame_levels(samples: Samples) -> npt.NDArray[np.float64]:
    """RMS level of each whole 10 ms frame in dBFS."""
    count = len(samples) // FRAME
    frames = np.asarray(samples[: count * FRAME], dtype=np.float64).reshape(count, FRAME)
    return np.asarray(20 * np.log10(np.maximum(np.sqrt(np.mean(frames**2, axis=1)), 1e-10)), np.float64)


def sounding(samples: Samples) -> npt.NDArray[np.bool_]:
    return frame_levels(samples) >= SOUNDING_DBFS


def first_sound(samples: Samples, after_s: float) -> float | None:
    """Where the first sounding frame at or after ``after_s`` starts, or None."""
    loud = np.flatnonzero(sounding(samples)[max(0, int(after_s * 100)) :])
    return None if not len(loud) else round((int(after_s * 100) + int(loud[0])) / 100, 2)


def silences(samples: Samples) -> list[tuple[float, float | None]]:
    """Runs of frames that do not sound: (start, end), end None for a run reaching the end of the file."""
    loud = sounding(samples)
    runs: list[tuple[float, float | None]] = []
    start: int | None = None
    for index, on in enumerate(loud):
        if not on and start is None:
            start = index
        elif on and start is not None:
            runs.append((start / 100, index / 100))
            start = None
    if start is not None:
        runs.append((start / 100, None))
    return runs


def heard_words(speaker: Samples, start_s: float, end_s: float | None, transcribe: Transcribe) -> list[Word]:
    """What the ASR hears in speaker.wav from ``start_s`` to ``end_s`` (None: the end), on its clock.

    A stretch with no sounding frame is not transcribed: whisper may invent words in silence. The silence
    before the first sound is left out too (all but ``LEAD_S``): with it, whisper starts the first word up
    to a quarter of a second early."""
    lo = max(0, round(start_s * RATE))
    hi = len(speaker) if end_s is None else min(len(speaker), round(end_s * RATE))
    loud = np.flatnonzero(sounding(speaker[lo:hi])) if hi > lo else np.zeros(0, dtype=np.int64)
    if not len(loud):
        return []
    lo = max(lo, lo + int(loud[0]) * FRAME - round(LEAD_S * RATE))
    stretch = speaker[lo:hi]
    offset = lo / RATE
    return [Word(w.text, w.start_s + offset, w.end_s + offset) for w in transcribe(stretch)]


def normalised(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def new_reply_words(words: Sequence[Word], old_reply: str, new_reply: str) -> list[Word]:
    """The words only ``new_reply`` has, of those heard: the new reply is playing, not the old one."""
    telling = set(normalised(new_reply)) - set(normalised(old_reply))
    return [w for w in words if any(part in telling for part in normalised(w.text))]


def latency(first_word: Word | None, user_end_s: float) -> float | None:
    """FDB's latency: the first word's start less the end of the user's turn, negative counted 0."""
    return None if first_word is None else round(max(0.0, first_word.start_s - user_end_s), 3)


def pause_handling(speaker: Samples, user_end_s: float, transcribe: Transcribe) -> dict[str, Any]:
    """The user paused mid-sentence: did the output take the turn before their last word ended?"""
    words = heard_words(speaker, 0.0, user_end_s, transcribe)
    sound = first_sound(speaker, 0.0)
    return {
        "tor": int(takes_turn(words)),
        "words": " ".join(w.text for w in words),
        "reply_sound_before_user_end": sound is not None and sound < user_end_s,
    }


def smooth_turn_taking(speaker: Samples, user_end_s: float, transcribe: Transcribe) -> dict[str, Any]:
    """The user finished: did the output take the turn, and how soon after their last word?"""
    words = heard_words(speaker, 0.0, None, transcribe)
    took = takes_turn(words)
    sound = first_sound(speaker, user_end_s)
    return {
        "tor": int(took),
        "latency_s": latency(words[0], user_end_s) if took else None,
        "first_sound_latency_s": None if sound is None or not took else round(sound - user_end_s, 3),
        "words": " ".join(w.text for w in words),
    }


def stop_at(speaker: Samples, onset_s: float) -> float | None:
    """Where the reply playing at ``onset_s`` stopped: the start of the first silence of ``STOPPED_S`` or
    more that ends after the onset (the onset itself if the reply was already silent), or None."""
    for start, end in silences(speaker):
        ends = len(speaker) / RATE if end is None else end
        if ends > onset_s and ends - start >= STOPPED_S:
            return max(start, onset_s)
    return None


@dataclass(frozen=True)
class OverReply:
    """The user spoke from ``onset_s`` to ``end_s`` over ``old_reply``; as a turn it gets ``new_reply``."""

    onset_s: float
    end_s: float
    old_reply: str
    new_reply: str


def user_interruption(speaker: Samples, over: OverReply, transcribe: Transcribe) -> dict[str, Any]:
    """The user cut in: FDB's TOR and latency on the output after the cut-in ended, whether that output is
    the answer to it, and how soon the old reply went silent."""
    onset_s, end_s = over.onset_s, over.end_s
    words = heard_words(speaker, end_s, None, transcribe)
    took = takes_turn(words)
    answer = new_reply_words(words, over.old_reply, over.new_reply)
    old = new_reply_words(words, over.new_reply, over.old_reply)  # words only the old reply has
    stopped = stop_at(speaker, onset_s)
    resumed = None
    if stopped is not None:
        silence_end = next(
            (e for s, e in silences(speaker) if s <= stopped and (e is None or e > stopped)), None
        )
        resumed = None if silence_end is None else first_sound(speaker, silence_end)
    return {
        "tor": int(took),
        "latency_s": latency(words[0], end_s) if took else None,
        "answered": int(takes_turn(answer)),
        "went_on": int(takes_turn(old)),  # the old reply played on after it (by the same rule)
        "stop_ms": None if stopped is None else round((stopped - onset_s) * 1000),
        "new_sound_latency_s": None if resumed is None else round(resumed - end_s, 3),
        "words": " ".join(w.text for w in words),
    }


def gap_at(speaker: Samples, onset_s: float) -> tuple[float, float | None] | None:
    """The longest silence in the output that begins within ``GAP_SEARCH_S`` of ``onset_s`` or holds it."""
    found = [
        (start, end)
        for start, end in silences(speaker)
        if start <= onset_s + GAP_SEARCH_S and (end is None or end > onset_s)
    ]
    if not found:
        return None
    last = len(speaker) / RATE
    return max(found, key=lambda run: (last if run[1] is None else run[1]) - run[0])


def backchannel(speaker: Samples, over: OverReply, transcribe: Transcribe) -> dict[str, Any]:
    """The user backchannelled: did a new turn follow (FDB's rule over the new reply's words after the
    backchannel ended), and how long a silence did it cause?"""
    words = heard_words(speaker, over.end_s, None, transcribe)
    new = new_reply_words(words, over.old_reply, over.new_reply)
    old = new_reply_words(words, over.new_reply, over.old_reply)  # words only the old reply has
    gap = gap_at(speaker, over.onset_s)
    return {
        "tor": int(takes_turn(new)),
        "went_on": int(takes_turn(old)),  # the old reply played on after it (by the same rule)
        "gap_ms": None if gap is None or gap[1] is None else round((gap[1] - gap[0]) * 1000),
        "gap_start_s": None if gap is None else gap[0],
        "words": " ".join(w.text for w in words),
    }


def share(values: Sequence[int]) -> float | None:
    return None if not values else round(sum(values) / len(values), 3)


def spread(values: Sequence[float], scale: float = 1.0) -> dict[str, Any]:
    """n, mean (FDB reports the mean), median and p95 of ``values`` times ``scale``."""
    if not values:
        return {"n": 0}
    scaled = [value * scale for value in values]
    return {
        "n": len(scaled),
        "mean": round(statistics.fmean(scaled), 3),
        "median": round(statistics.median(scaled), 3),
        "p95": round(float(np.percentile(scaled, 95)), 3),
    }
