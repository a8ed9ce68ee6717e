"""Each scenario in audio/scenarios gives what a user would notice: its turns, what was heard, what
each request carried, the events in the order that matters, and its timings within a stated tolerance.

tests/sim/expected/NAME.json holds a scenario's expectations. Each turn (one LLM request) lists its
request as one line per item ("user: ...", "assistant, interrupted: ...", "tool_call ID: NAME {ARGS}",
"tool_result ID[, failed]: OUTPUT"), the text heard ("all" for the whole reply), whether it was cut,
its LLM error, its barge-in reaction and its voice-to-voice time; ``backchannels`` and ``stops`` list
the words said over a reply that took no turn (none, if left out). Tolerances, so a better engine passes
without new figures while a lost turn, a wrong request or a self-interruption fails:

- the user's words compare as lower-case words (whisper's punctuation and casing may shift), one place in
  them possibly misheard, two words at most (whisper's int8 kernels differ by CPU: tests/support/
  word_error.py);
- the heard prefix of a cut reply may differ by one word (a reaction 20-40 ms earlier or later moves
  the cut by at most a word), and must be a word prefix of the reply;
- the barge-in reaction (the speaker silent this long after the interrupting speech began) at most
  REACTION_MS slower than expected, and after the user began (faster is fine);
- voice-to-voice at most VOICE_TO_VOICE_MS slower than expected (faster is fine);
- no more false alarms (pauses resumed) than expected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.scenarios import NAMES, RunScenario, interrupting_onset, read_events
from tests.support.word_error import misheard_in_one_place

EXPECTED = Path(__file__).resolve().parent / "expected"
REACTION_MS = 40
VOICE_TO_VOICE_MS = 100


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXPECTED / f"{name}.json").read_text())
    return data


def request_line(item: dict[str, Any]) -> str:
    """One item of a request as the expectations write it."""
    role = item["role"]
    if role == "user":
        return f"user: {item['text']}"
    if role == "assistant":
        return ("assistant, interrupted: " if item.get("interrupted") else "assistant: ") + item["text"]
    if role == "tool_call":
        return f"tool_call {item['id']}: {item['name']} {json.dumps(item['arguments'], sort_keys=True)}"
    failed = ", failed" if item.get("failed") else ""
    return f"tool_result {item['id']}{failed}: {item['output']}"


def same_heard(actual: str, wanted: str) -> bool:
    """The same heard prefix, give or take its last word."""
    return abs(len(words(actual)) - len(words(wanted))) <= 1 and (
        words(actual)[: len(words(wanted))] == words(wanted)
        or words(wanted)[: len(words(actual))] == words(actual)
    )


def same_line(actual: str, wanted: str) -> bool:
    head, _, text = actual.partition(": ")
    wanted_head, _, wanted_text = wanted.partition(": ")
    if head != wanted_head:
        return False
    if head == "user":
        return misheard_in_one_place(text, wanted_text)
    if head == "assistant, interrupted":
        return same_heard(text, wanted_text)
    return text == wanted_text


def check_request(actual: list[dict[str, Any]], wanted: list[str], where: str) -> None:
    lines = [request_line(item) for item in actual]
    told = f"{where} carried\n  " + "\n  ".join(lines) + "\nexpected\n  " + "\n  ".join(wanted)
    assert len(lines) == len(wanted), told
    assert all(map(same_line, lines, wanted)), told


@pytest.mark.models
@pytest.mark.parametrize("name", NAMES)
def test_turns_heard_text_and_requests_are_as_expected(name: str, simulated: RunScenario) -> None:
    report, _ = simulated(name)
    expect = expected(name)
    turns = report["turns"]

    assert len(turns) == len(expect["turns"]), [turn["request"][-1] for turn in turns]
    for number, (turn, wanted) in enumerate(zip(turns, expect["turns"], strict=True), 1):
        where = f"request {number}"
        check_request(turn["request"], wanted["request"], where)
        assert turn["interrupted"] == wanted.get("interrupted", False), where
        assert turn.get("error") == wanted.get("error"), where
        assert turn["reply"].startswith(turn["spoken"]), where
        if wanted["heard"] == "all":
            assert turn["spoken"], where
            assert turn["spoken"] == turn["reply"], (where, turn["spoken"])
        else:
            assert same_heard(turn["spoken"], wanted["heard"]), (where, turn["spoken"], wanted["heard"])
        assert turn.get("false_barge_ins", 0) <= wanted.get("false_barge_ins", 0), where
    discarded = [request["request"] for request in report.get("discarded_requests", [])]
    assert len(discarded) == len(expect.get("discarded", []))
    for request, wanted_request in zip(discarded, expect.get("discarded", []), strict=True):
        check_request(request, wanted_request, "a discarded request")
    said = [speech["transcript"] for speech in report["user_speech"] if speech["transcript"]]
    assert len(said) == len(expect["user_said"]), said
    assert all(map(misheard_in_one_place, said, expect["user_said"])), said
    assert report.get("notices", []) == expect.get("notices", [])
    assert report.get("duplicates", []) == expect.get("duplicates", [])
    for overlap in ("backchannels", "stops"):  # words over a reply that took no turn
        told = [words(said["text"]) for said in report.get(overlap, [])]
        assert told == [words(text) for text in expect.get(overlap, [])], overlap


@pytest.mark.models
@pytest.mark.parametrize("name", NAMES)
def test_barge_in_reaction_and_voice_to_voice_are_within_tolerance(
    name: str, simulated: RunScenario, manifest: dict[str, Any]
) -> None:
    report, out = simulated(name)
    done = {e["turn"]: e for e in read_events(out) if e["type"] == "response.done"}
    created = [e["turn"] for e in read_events(out) if e["type"] == "response.created"]

    for number, turn, wanted in zip(created, report["turns"], expected(name)["turns"], strict=True):
        if "reaction_ms" in wanted:
            onset = interrupting_onset(report, turn, manifest)
            reaction = (turn["audio_end_s"] - onset) * 1000
            assert 0 < reaction <= wanted["reaction_ms"] + REACTION_MS, (number, reaction)
        if "voice_to_voice_ms" in wanted:
            measured = done[number]["metrics"]["voice_to_voice_ms"]
            assert measured <= wanted["voice_to_voice_ms"] + VOICE_TO_VOICE_MS, (number, measured)


@pytest.mark.models
@pytest.mark.parametrize("name", NAMES)
def test_events_come_in_the_order_a_client_relies_on(name: str, simulated: RunScenario) -> None:
    """A spoken input: speech stopped, then thinking, then its transcript, then response.created; a cut
    turn is reported interrupted before the next request; nothing is sent while the user speaks."""
    _, out = simulated(name)
    events = read_events(out)
    kinds = [e["type"] if e["type"] != "state" else f"state:{e['state']}" for e in events]

    for at, event in enumerate(events):
        if event["type"] != "response.created":
            continue
        transcript = max(i for i in range(at) if kinds[i] == "input.transcript")
        if events[transcript]["id"].startswith("speech-"):
            stopped = max(i for i in range(transcript) if kinds[i] == "input.speech_stopped")
            assert "state:thinking" in kinds[stopped:transcript], kinds[stopped : at + 1]
    for at, event in enumerate(events):
        if event["type"] == "response.interrupted":
            later = [e["turn"] for e in events[at:] if e["type"] == "response.created"]
            earlier = [e["turn"] for e in events[:at] if e["type"] == "response.created"]
            assert event["turn"] in earlier
            assert all(turn > event["turn"] for turn in later), (event, later)
    speaking = False
    for kind in kinds:  # a request sent at a pause the user went on from shows no thinking
        speaking = kind == "input.speech_started" or (speaking and kind != "input.speech_stopped")
        assert not (speaking and kind in ("state:thinking", "response.created")), kinds
    ends = [e["turn"] for e in events if e["type"] in ("response.done", "response.interrupted")]
    assert len(ends) == len(set(ends)), "a turn ended twice"
