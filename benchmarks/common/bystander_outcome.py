"""What a voice not talking to the assistant did to a run, from its outputs (issue 47).

benchmarks/full_duplex.py scores each case of its bystander categories (a television under the user's
question and over the reply, two people chatting over the reply, the user cutting in while either goes on)
with these. Each request in report.json is put down to the user cue whose speech the voice it was
transcribed from overlapped (the event stream's voice starts and stops before each transcript), or failing
that to the cue whose words it carries best (at least ``HEARD`` of them, word_error's alignment); a
request that is neither is the bystander's. A user's request misheard under a television is the user's,
with few words kept.

- **answers to the bystander**: requests put down to no user cue whose reply played (``bystander_requests``
  counts them played or not);
- **cuts by the bystander**: replies interrupted while no user cue was under way (its onset to its end and
  ``USER_SLACK_S`` on);
- **pauses for the bystander**: the reply paused (the ``paused`` state) while no user cue was under way; each
  resumed or was cut, so a pause is counted whether or not it became a cut;
- **ignored** (τ-voice's S_ND success): the bystander cut nothing and was answered never; **ignored without
  a pause**: and it paused nothing either (the stricter reading: a pause is a yield that took it back);
- **behaviour** (Full-Duplex-Bench v1.5's categories of what the output did after the overlap, its judge
  replaced by these counts): ``respond`` (answered it), ``stop`` (cut by it), ``resume`` (paused, went on),
  ``continue`` (talked through);
- for the user: **false rejects** (a user request or cut-in no request carried), **extra words** (words of
  the user's requests that are not theirs, as a television's sentence joined to their question), the
  latency of each request's answer (its end to the reply's first sample: a television talking on must not
  hold it), and for a cut-in: **yielded** (the reply playing at its onset was cut, and a request carried it
  and its reply played) and the card's ``stop_ms`` from speaker.wav.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.cut_in_outcome import last_user_text, mean
from common.full_duplex_metrics import Samples, spread, stop_at
from common.word_error import align, most_hits, said_words

HEARD = 0.5  # a request carries a cue when it holds this share of the cue's words
USER_SLACK_S = 1.0  # a reply cut or paused this soon after the user stopped is the user's doing


@dataclass(frozen=True)
class UserCue:
    """Something the user said in a run: its words, its role and where its speech lies on the run's clock."""

    text: str
    role: str  # "request" or "cut_in"
    onset_s: float
    end_s: float


def kept(text: str, request: str | None) -> tuple[float, int]:
    """The share of ``text``'s words ``request`` carries, in order, and the words it adds."""
    found = align(text, request or "", most_hits)
    return found.hits / max(1, len(said_words(text))), found.insertions


def utterances(events: list[dict[str, Any]]) -> list[tuple[float, float, str]]:
    """(first voice start, last voice stop, transcript) of each transcript in the event stream."""
    found: list[tuple[float, float, str]] = []
    start: float | None = None
    stop: float | None = None
    for event in events:
        if event["type"] == "input.speech_started" and start is None:
            start = event["t"]
        elif event["type"] == "input.speech_stopped":
            stop = event["t"]
        elif event["type"] == "input.transcript":
            at = event["t"]
            found.append((at if start is None else start, at if stop is None else stop, event["text"]))
            start = stop = None
    return found


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def whose(
    turns: list[dict[str, Any]], cues: list[UserCue], events: list[dict[str, Any]] | None = None
) -> list[int | None]:
    """The user cue each turn's request is (its index), or None: the bystander's. A request is a cue's
    when the voice its transcripts came from overlapped the cue's speech (the user misheard is still the
    user), or failing that when it carries ``HEARD`` of the cue's words."""
    spans = utterances(events or [])
    owners: list[int | None] = []
    for turn in turns:
        text = " ".join(said_words(last_user_text(turn) or ""))
        voiced = [(a, b) for a, b, said in spans if said_words(said) and " ".join(said_words(said)) in text]
        heard = [sum(overlap(span, (cue.onset_s, cue.end_s)) for span in voiced) for cue in cues]
        shares = [kept(cue.text, text)[0] for cue in cues]
        by_time = max(range(len(cues)), key=lambda index: heard[index], default=None)
        by_words = max(range(len(cues)), key=lambda index: shares[index], default=None)
        if by_time is not None and heard[by_time] > 0:
            owners.append(by_time)
        else:
            owners.append(by_words if by_words is not None and shares[by_words] >= HEARD else None)
    return owners


def users_doing(cues: list[UserCue], t: float) -> bool:
    return any(cue.onset_s <= t <= cue.end_s + USER_SLACK_S for cue in cues)


def pauses_for_bystander(events: list[dict[str, Any]], cues: list[UserCue], onset_s: float) -> int:
    """Times the reply paused from the bystander's onset on while the user said nothing."""
    return sum(
        event["type"] == "state"
        and event.get("state") == "paused"
        and event["t"] >= onset_s
        and not users_doing(cues, event["t"])
        for event in events
    )


def behaviour(answers: int, cuts: int, pauses: int) -> str:
    if answers:
        return "respond"
    if cuts:
        return "stop"
    return "resume" if pauses else "continue"


def cut_in_reaction(
    cue: UserCue, turns: list[dict[str, Any]], owners: list[int | None], index: int, speaker: Samples
) -> dict[str, Any]:
    """The user's cut-in at ``cue``: the card's stop latency (speaker.wav), and whether it was yielded to."""
    stopped = stop_at(speaker, cue.onset_s)
    playing = [
        turn
        for turn in turns
        if turn["audio_start_s"] is not None
        and turn["audio_start_s"] <= cue.onset_s <= (turn["audio_end_s"] or float("inf"))
    ]
    pairs = zip(turns, owners, strict=True)
    answered = any(owner == index and turn["audio_start_s"] is not None for turn, owner in pairs)
    cut = bool(playing) and bool(playing[-1]["interrupted"])
    return {  # no reply playing at its onset (cut before by the bystander): nothing to stop
        "stop_ms": None if stopped is None or not playing else round((stopped - cue.onset_s) * 1000),
        "yielded": int(cut and answered),
    }


def bystander_outcome(
    cues: list[UserCue],
    bystander_onset_s: float,
    report: dict[str, Any],
    events: list[dict[str, Any]],
    speaker: Samples,
) -> dict[str, Any]:
    """One run's figures (the module's docstring): the bystander's and the user's."""
    turns = report["turns"]
    owners = whose(turns, cues, events)
    theirs = [turn for turn, owner in zip(turns, owners, strict=True) if owner is None]
    answers = sum(turn["audio_start_s"] is not None for turn in theirs)
    cuts = sum(
        bool(turn["interrupted"])
        and turn["audio_end_s"] is not None
        and turn["audio_end_s"] >= bystander_onset_s
        and not users_doing(cues, turn["audio_end_s"])
        for turn in turns
    )
    pauses = pauses_for_bystander(events, cues, bystander_onset_s)
    user: list[dict[str, Any]] = []
    for index, cue in enumerate(cues):
        mine = [turn for turn, owner in zip(turns, owners, strict=True) if owner == index]
        share, extra = kept(cue.text, last_user_text(mine[0])) if mine else (0.0, 0)
        start = mine[0]["audio_start_s"] if mine else None
        found: dict[str, Any] = {
            "role": cue.role,
            "said": cue.text,
            "request": last_user_text(mine[0]) if mine else None,
            "heard": int(bool(mine)),
            "words_kept": round(share, 3),
            "extra_words": extra,
            "answer_latency_s": None if start is None else round(start - cue.end_s, 3),
        }
        if cue.role == "cut_in":
            found |= cut_in_reaction(cue, turns, owners, index, speaker)
        user.append(found)
    return {
        "ignored": int(not cuts and not answers),
        "ignored_without_pause": int(not cuts and not answers and not pauses),
        "behaviour": behaviour(answers, cuts, pauses),
        "answers_to_bystander": answers,
        "bystander_requests": len(theirs),
        "bystander_request_texts": [last_user_text(turn) for turn in theirs],
        "cuts_by_bystander": cuts,
        "pauses_for_bystander": pauses,
        "user": user,
    }


def bystander_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A category's figures over its runs (those that ran), for one ``[turn] speaker`` setting."""
    ran = [row for row in rows if "ignored" in row]
    said = [cue for row in ran for cue in row["user"]]
    cut_ins = [cue for cue in said if cue["role"] == "cut_in"]
    behaviours = [row["behaviour"] for row in ran]
    return {
        "n": len(ran),
        "s_nd": mean([row["ignored"] for row in ran]),
        "s_nd_without_pause": mean([row["ignored_without_pause"] for row in ran]),
        "behaviour": {name: behaviours.count(name) for name in ("respond", "stop", "resume", "continue")},
        "answers_to_bystander": sum(row["answers_to_bystander"] for row in ran),
        "cuts_by_bystander": sum(row["cuts_by_bystander"] for row in ran),
        "pauses_for_bystander": sum(row["pauses_for_bystander"] for row in ran),
        "user_said": len(said),
        "false_rejects": sum(1 - cue["heard"] for cue in said),
        "user_words_kept": mean([cue["words_kept"] for cue in said]),
        "user_words_kept_alone": mean([cue["words_kept_alone"] for cue in said if "words_kept_alone" in cue]),
        "user_extra_words": sum(cue["extra_words"] for cue in said),
        "answer_latency_s": spread(
            [cue["answer_latency_s"] for cue in said if cue["answer_latency_s"] is not None]
        ),
        "yield_rate": mean([cue["yielded"] for cue in cut_ins]),
        "yield_n": len(cut_ins),
        "cut_in_stop_ms": spread([cue["stop_ms"] for cue in cut_ins if cue["stop_ms"] is not None]),
    }
