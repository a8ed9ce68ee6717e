"""What became of a cut-in over a reply, and τ-voice's selectivity figures, from a run's outputs.

benchmarks/full_duplex.py scores each user interruption (plain, or opening with a listener's word and a
breath, issue 45) and each backchannel with these, beside Full-Duplex-Bench's metrics:

- **words kept**: the share of the words said (the clip's text, over word_error's ``said_words``) found,
  in order, in the first request sent after the cut-in (the last user item of report.json's next turn),
  by the alignment that matches the most words; **extra words**: that item's words the alignment finds
  no place for (words the user never said). No request at all keeps nothing. ``requests_after`` lists
  every request's last user item after the cut-in, so a cut-in sent in two parts shows.
- **silent within 300 ms**: the card's ``stop_ms`` (the onset to the reply's first silence of 0.5 s or
  more) is at most 300 ms, issue 45's promise.
- **resumed into the cut-in**: the event stream's ``response.resumed`` for the reply playing at the
  cut-in's onset, after the onset and before its ``response.interrupted`` (the promise: never).
- **silent until the answer**: speaker.wav holds no sound from where the reply stopped (the card's
  ``stop_at``) to the next reply's first sample (report.json's ``audio_start_s``, from
  ``output_audio.started``), and the reply did not resume into the cut-in; false if no answer played.
- **yielded** (τ-voice's yield, R_Y): the reply stopped, its own words did not go on after the cut-in, and
  a new reply followed; **talked through** (S_BC's success): after a backchannel the reply's own words
  went on and no new reply took the turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from common.full_duplex_metrics import RATE, Samples, sounding
from common.word_error import align, most_hits, said_words

ANSWER_SLACK_S = 0.03  # output_audio.started and a 10 ms frame's level may disagree by a frame or two
SILENT_WITHIN_MS = 300  # issue 45's promise: silent this soon after the user began


def turns_after(turns: list[dict[str, Any]], onset_s: float) -> list[dict[str, Any]]:
    """report.json's turns after the one playing when the user began (the last whose audio started by
    ``onset_s``)."""
    started = [
        index
        for index, turn in enumerate(turns)
        if turn["audio_start_s"] is not None and turn["audio_start_s"] <= onset_s
    ]
    return turns[started[-1] + 1 :] if started else []


def last_user_text(turn: dict[str, Any]) -> str | None:
    users = [item["text"] for item in turn["request"] if item["role"] == "user"]
    return users[-1] if users else None


def words_kept(said: str, request: str | None) -> dict[str, Any]:
    """How much of ``said`` the request carried, and how many words it added."""
    found = align(said, request or "", most_hits)
    return {
        "words_kept": round(found.hits / max(1, len(said_words(said))), 3),
        "extra_words": found.insertions,
    }


def resumed_into(events: list[dict[str, Any]], onset_s: float) -> bool:
    """Whether the reply playing at ``onset_s`` resumed after it and before it was cut."""
    created = [e["turn"] for e in events if e["type"] == "response.created" and e["t"] <= onset_s]
    if not created:
        return False
    ours = [e for e in events if e.get("turn") == created[-1] and e["t"] >= onset_s]
    cut = next((e["t"] for e in ours if e["type"] == "response.interrupted"), float("inf"))
    return any(e["type"] == "response.resumed" and e["t"] < cut for e in ours)


def sound_before_answer_ms(speaker: Samples, stop_s: float | None, answer_s: float | None) -> int | None:
    """How long speaker.wav sounded from the reply's stop to the answer's first sample; None without both."""
    if stop_s is None or answer_s is None:
        return None
    between = speaker[round(stop_s * RATE) : round(max(stop_s, answer_s - ANSWER_SLACK_S) * RATE)]
    return int(np.count_nonzero(sounding(between))) * 10


def cut_in_outcome(
    report: dict[str, Any],
    events: list[dict[str, Any]],
    speaker: Samples,
    said: str,
    onset_s: float,
    stop_ms: int | None,
) -> dict[str, Any]:
    """Issue 45's figures for one cut-in said (``said``) from ``onset_s``, the reply stopped ``stop_ms``
    after it (the card's measure)."""
    after = turns_after(report["turns"], onset_s)
    request = last_user_text(after[0]) if after else None
    answer = next((turn["audio_start_s"] for turn in after if turn["audio_start_s"] is not None), None)
    stop_s = None if stop_ms is None else onset_s + stop_ms / 1000
    resumed = resumed_into(events, onset_s)
    sounded = sound_before_answer_ms(speaker, stop_s, answer)
    return {
        "request": request,
        "requests_after": [last_user_text(turn) for turn in after],
        **words_kept(said, request),
        "resumed_into_cut_in": resumed,
        "silent_within_300ms": stop_ms is not None and stop_ms <= SILENT_WITHIN_MS,
        "sound_before_answer_ms": sounded,
        "silent_until_answer": sounded == 0 and not resumed,
    }


def yielded(found: dict[str, Any]) -> int:
    """τ-voice's yield, as this card sees it: stopped, not gone on after the cut-in, and answered."""
    return int(found["stop_ms"] is not None and not found["went_on"] and bool(found["answered"]))


def talked_through(found: dict[str, Any]) -> int:
    """S_BC's success: after the backchannel the reply went on and no new reply took the turn."""
    return int(bool(found["went_on"]) and not found["tor"])


def mean(values: list[float]) -> float | None:
    return None if not values else round(sum(values) / len(values), 3)


def cut_in_summary(ran: list[dict[str, Any]]) -> dict[str, Any]:
    """Issue 45's figures over the cut-ins of a category that ran."""
    return {
        "yield_rate": mean([row["yielded"] for row in ran]),
        "words_kept": mean([row["words_kept"] for row in ran]),
        "whole_requests": sum(row["words_kept"] == 1.0 for row in ran),
        "words_kept_alone": mean([row["words_kept_alone"] for row in ran]),
        "extra_words": sum(row["extra_words"] for row in ran),
        "silent_within_300ms": mean([row["silent_within_300ms"] for row in ran]),
        "silent_until_answer": mean([row["silent_until_answer"] for row in ran]),
        "resumed_into_cut_in": sum(row["resumed_into_cut_in"] for row in ran),
    }


def selectivity(cut_ins: list[dict[str, Any]], backchannels: list[dict[str, Any]]) -> dict[str, Any]:
    """τ-voice's two selectivity figures over every cut-in and every backchannel that ran."""
    return {
        "yield_rate": mean([row["yielded"] for row in cut_ins]),
        "yield_n": len(cut_ins),
        "s_bc": mean([row["talked_through"] for row in backchannels]),
        "s_bc_n": len(backchannels),
    }
