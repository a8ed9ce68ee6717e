"""A scenario's ``expect`` list, checked against a run's records: each kind passes on the run it describes
and fails on one that differs, with a line saying what differed; a bad entry is one line at load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import AUDIO, SCENARIOS
from voice.errors import ConfigError
from voice.sim.expectations import Outcome, RunRecords, check_expectations, parse_expectations
from voice.sim.scenario import load_scenario

REPLY_1 = "Tomorrow starts dry and bright, with a light breeze from the south."
HEARD_1 = "Tomorrow starts dry and"
REPLY_2 = "On Sunday it stays dry all day."


def cut_run(**changes: Any) -> RunRecords:
    """A run where cue 2 cut reply 1 after four words and reply 2 played in full (a forecast call ran)."""
    call = {"role": "tool_call", "id": "c1", "name": "forecast", "arguments": {"day": "sunday"}}
    report: dict[str, Any] = {
        "version": 1,
        "turns": [
            {"request": [{"role": "user", "text": "What will the weather be like?"}], "reply": REPLY_1,
             "spoken": HEARD_1, "interrupted": True, "audio_start_s": 3.0, "audio_end_s": 5.25,
             "barge_in_s": 5.1, "tool_calls": ["forecast"]},
            {"request": [{"role": "user", "text": "What will the weather be like?"},
                         {"role": "assistant", "text": HEARD_1, "interrupted": True},
                         call,
                         {"role": "tool_result", "id": "c1", "output": "Not run: the user interrupted.",
                          "failed": True},
                         {"role": "user", "text": "Sorry, I meant on Sunday."}],
             "reply": REPLY_2, "spoken": REPLY_2, "interrupted": False, "audio_start_s": 7.4,
             "audio_end_s": 9.0, "barge_in_s": None},
        ],
        "user_speech": [
            {"start_s": 0.8, "end_s": 2.6, "transcript": "What will the weather be like?"},
            {"start_s": 5.1, "end_s": 6.6, "transcript": "Sorry, I meant on Sunday."},
        ],
        "user_audio": [{"cue": 1, "wav": "a.wav", "at_s": 0.5}, {"cue": 2, "wav": "b.wav", "at_s": 4.9}],
    }  # fmt: skip
    session = [
        {"type": "turn_start", "turn": 1},
        {"type": "item", "item": call},
        {"type": "turn_end", "turn": 1},
        {"type": "turn_start", "turn": 2},
    ]  # fmt: skip
    events = [{"type": "response.done", "turn": 2, "metrics": {"voice_to_voice_ms": 800.0}}]
    return RunRecords(report | changes, session, events)


def check(entry: dict[str, Any], records: RunRecords, judge: Any = None) -> Outcome:
    (outcome,) = check_expectations(parse_expectations([entry]), records, judge)
    return outcome


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ({"cut": 1, "by": 2, "within_ms": 200}, "reply 1 was cut by user cue 2: audio stopped 150 ms after"),
        ({"completed": 2}, "reply 2 played to its end (7.4-9.0 s)"),
        ({"heard_prefix": 1}, 'heard 4 of 12 words: "Tomorrow starts dry and"'),
        (
            {"request": 2, "carries": "interrupted"},
            'request 2 carries the interrupted item "Tomorrow starts dry and"',
        ),
        ({"request": 2, "carries": "not_run"}, 'carries the tool result "Not run: the user interrupted."'),
        ({"voice_to_voice": 2, "under_ms": 1000}, "voice-to-voice 800 ms (bound 1000 ms)"),
        ({"reply_text": 2, "contains": "sunday"}, 'contains "sunday"'),
        ({"reply_text": 1, "heard": True, "matches": "dry and$"}, "heard text"),
        (
            {"tool_called": "forecast", "reply": 1, "arguments": {"day": "sunday"}},
            'called with {"day": "sunday"}',
        ),
    ],
)
def test_each_kind_passes_on_the_run_it_describes(entry: dict[str, Any], line: str) -> None:
    outcome = check(entry, cut_run())
    assert outcome.status == "pass", outcome.line
    assert line in outcome.line


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ({"cut": 2}, "reply 2 was not cut: it played to its end"),
        ({"cut": 1, "by": 1}, "reply 1 was cut by user cue 2, not 1"),
        ({"cut": 1, "within_ms": 100}, "audio stopped 150 ms after the speech began (bound 100 ms)"),
        ({"completed": 1}, 'reply 1 was cut at 5.25 s after "Tomorrow starts dry and"'),
        ({"completed": 3}, "reply 3: there were only 2 requests"),
        ({"request": 2, "carries": "merged"}, "request 2 holds 2 user items, the one before 1: not merged"),
        ({"request": 2, "carries": "tool_result"}, 'tool result failed: "Not run: the user interrupted."'),
        ({"request": 1, "carries": "interrupted"}, "request 1 carries no interrupted assistant item"),
        ({"voice_to_voice": 2, "under_ms": 500}, "voice-to-voice 800 ms (bound 500 ms)"),
        ({"reply_text": 2, "contains": "Monday"}, 'lacks "Monday"'),
        ({"reply_text": 2, "matches": "^Tomorrow"}, "does not match /^Tomorrow/"),
        ({"tool_called": "forecast", "arguments": {"day": "monday"}}, 'not {"day": "monday"}'),
        ({"tool_called": "lookup"}, "tool lookup was not called (calls: forecast)"),
        ({"backchannel": 1}, "no backchannel over reply 1"),
        ({"no_request_after_stop": True}, "no stop phrase was heard"),
    ],
)
def test_each_kind_fails_on_a_run_that_differs_saying_what_differed(entry: dict[str, Any], line: str) -> None:
    outcome = check(entry, cut_run())
    assert outcome.status == "fail"
    assert line in outcome.line


def test_a_cue_that_opens_on_voice_cut_the_reply_though_the_onset_is_told_a_frame_before_it() -> None:
    """The VAD's onset is its first voiced frame's start: 10 ms before the cue's first sample here."""
    turns = cut_run().report["turns"]
    opened = [turns[0] | {"barge_in_s": 4.89}, turns[1]]
    outcome = check({"cut": 1, "by": 2}, cut_run(turns=opened))
    assert outcome.status == "pass", outcome.line


def test_the_heard_text_may_differ_from_the_replys_start_by_as_many_words_as_allowed() -> None:
    turns = cut_run().report["turns"]
    misheard = [turns[0] | {"spoken": "Tomorrow starts wet and"}, turns[1]]
    assert check({"heard_prefix": 1, "within_words": 1}, cut_run(turns=misheard)).status == "pass"
    outcome = check({"heard_prefix": 1}, cut_run(turns=misheard))
    assert outcome.status == "fail"
    assert "differs from the reply's start by 1 words" in outcome.line


def test_merged_input_and_a_tools_result_in_the_next_request() -> None:
    first = {
        "request": [{"role": "user", "text": "What's the weather"}],
        "reply": "",
        "spoken": "",
        "interrupted": True,
        "audio_start_s": None,
        "audio_end_s": None,
        "barge_in_s": None,
    }
    second = {"request": [{"role": "user", "text": "What's the weather in Paris"},
                          {"role": "assistant", "text": "Let me check."},
                          {"role": "tool_result", "id": "c1", "output": "Sunny, 21 degrees."}],
              "reply": "Sunny.", "spoken": "Sunny.", "interrupted": False, "audio_start_s": 5.0,
              "audio_end_s": 6.0, "barge_in_s": None}  # fmt: skip
    run = cut_run(turns=[first, second])
    assert check({"request": 2, "carries": "merged", "contains": "paris"}, run).status == "pass"
    assert check({"request": 2, "carries": "tool_result", "output": "sunny"}, run).status == "pass"
    outcome = check({"request": 2, "carries": "tool_result", "output": "rain"}, run)
    assert outcome.status == "fail"
    assert 'is "Sunny, 21 degrees.", without "rain"' in outcome.line


def test_a_backchannel_passes_only_if_the_reply_played_on_after_it() -> None:
    turns = cut_run().report["turns"]
    nod = [{"t": 8.1, "text": "Mm-hmm.", "turn": 2}]
    run = cut_run(backchannels=nod)
    assert check({"backchannel": 2, "text": "mm hmm"}, run).status == "pass"
    assert (
        check({"backchannel": 1}, cut_run(backchannels=[{"t": 4.2, "text": "Yeah.", "turn": 1}])).status
        == "pass"
    )
    outcome = check({"backchannel": 1}, cut_run(backchannels=[{"t": 5.5, "text": "Yeah.", "turn": 1}]))
    assert outcome.status == "fail"
    assert 'backchannel "Yeah." at 5.5 s, but reply 1 stopped at 5.25 s' in outcome.line
    assert check({"backchannel": 2, "text": "yeah"}, cut_run(turns=turns, backchannels=nod)).status == "fail"


def test_a_request_after_a_stop_phrase_fails_unless_the_user_spoke_again() -> None:
    stop = [{"t": 6.7, "text": "Wait, stop.", "turn": 1}]
    one_turn = cut_run().report["turns"][:1]
    assert check({"no_request_after_stop": True}, cut_run(turns=one_turn, stops=stop)).status == "pass"
    outcome = check({"no_request_after_stop": True}, cut_run(stops=stop))
    assert outcome.status == "fail"
    assert 'request 2 followed the stop "Wait, stop." with no new input' in outcome.line
    speech = cut_run().report["user_speech"] + [{"start_s": 7.0, "end_s": 7.5, "transcript": "Go on."}]
    assert check({"no_request_after_stop": True}, cut_run(stops=stop, user_speech=speech)).status == "pass"


def test_a_judge_answers_judge_entries_and_without_one_they_are_skipped() -> None:
    asked: list[tuple[str, str]] = []

    def judge(text: str, criterion: str) -> tuple[bool, str]:
        asked.append((text, criterion))
        return False, "it answered 'no'"

    entry = {"reply_text": 2, "judge": "the reply apologises"}
    outcome = check(entry, cut_run(), judge)
    assert asked == [(REPLY_2, "the reply apologises")]
    assert outcome.status == "fail"
    assert 'judge says no to "the reply apologises"' in outcome.line
    skipped = check(entry, cut_run())
    assert skipped.status == "skip"
    assert "no judge LLM named" in skipped.line


@pytest.mark.parametrize(
    ("expect", "error"),
    [
        ({"completed": 1}, "expect must be a list of expectations"),
        ([{"completed": 0}], "expect entry 1 (completed): a reply number counting from 1, got 0"),
        ([{"completed": 1}, {"finished": 1}], "expect entry 2 must name exactly one kind of expectation"),
        ([{"cut": 1, "completed": 1}], "expect entry 1 must name exactly one kind"),
        ([{"cut": 1, "within": 300}], "expect entry 1 (cut): unknown key 'within'; it takes by, within_ms"),
        ([{"cut": 1, "within_ms": -1}], "within_ms must be a number not below 0"),
        (
            [{"request": 2, "carries": "all"}],
            "carries must be one of interrupted, merged, tool_result, not_run",
        ),
        ([{"voice_to_voice": 1}], "expect entry 1 (voice_to_voice): needs under_ms"),
        ([{"reply_text": 1}], "needs one of contains, matches or judge"),
        ([{"reply_text": 1, "matches": "(on"}], "matches is not a regular expression"),
        ([{"tool_called": ""}], "(tool_called) must be a tool's name"),
        ([{"no_request_after_stop": 1}], "(no_request_after_stop) must be true"),
        (["completed"], "expect entry 1 must be an object"),
    ],
)
def test_a_bad_expectation_is_one_line_naming_the_file_at_load(
    tmp_path: Path, expect: Any, error: str
) -> None:
    path = tmp_path / "bad.json"
    cue = {"wav": str(AUDIO / "what-weather.wav"), "at_s": 0.5}
    data = {"version": 1, "llm": {"replies": ["Hi."]}, "user": [cue], "end_s": 5, "expect": expect}
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"scenario {path}: ")
    assert error in message


def test_every_project_scenario_states_what_must_hold() -> None:
    scenarios = [*SCENARIOS, *sorted((AUDIO / "scenarios" / "eagerness").glob("*.json"))]
    for path in scenarios:
        assert load_scenario(path).expectations, path
