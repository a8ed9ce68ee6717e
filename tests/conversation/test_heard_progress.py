"""Heard progress in the session log, and a session resumed after the process died mid-reply."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.support.room import REPLY, Room, ask
from voice.cli import main
from voice.conversation.continuation import Conversation
from voice.conversation.items import AssistantText, UserText
from voice.conversation.log_records import ReplyHeard, TurnLost
from voice.conversation.session_log import SessionLog, load_session, open_session
from voice.engine.inputs import CloseSession
from voice.testing.stand_ins import QUESTION, WORD

ANSWER = "Tomorrow starts dry, then rain moves in."


def logged(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_playing_reply_logs_its_heard_words_about_twice_a_second(tmp_path: Path) -> None:
    room = Room()
    with SessionLog.create(tmp_path / "s.jsonl") as log:
        ask(room)
        room.synthesize(room.stream(1, REPLY))
        for _ in range(len(REPLY)):  # a word every quarter of a second
            room.clock += WORD
            room.play(1, WORD)
            log.append_all(room.engine.conversation.take_events())

    lines = logged(tmp_path / "s.jsonl")
    heard = [line for line in lines if line["type"] == "heard"]
    # ten words over 2.5 s: a line every other word, not one per word, the last word in the turn's end
    assert [line["heard"] for line in heard] == [
        "Tomorrow",
        "Tomorrow starts dry,",
        "Tomorrow starts dry, then rain",
        "Tomorrow starts dry, then rain moves in",
        "Tomorrow starts dry, then rain moves in from the",
    ]
    times = [float(str(line["heard_s"])) for line in heard]
    assert all(0.5 <= later - earlier <= 0.75 for earlier, later in itertools.pairwise(times))
    assert [line["type"] for line in lines[-2:]] == ["item", "turn_end"]  # played in full


def killed_mid_reply(path: Path) -> None:
    """A session whose process died while "Tomorrow starts dry," had been heard of the answer."""
    conversation = Conversation()
    with SessionLog.create(path) as log:
        conversation.submit(QUESTION, "in-1")
        conversation.add_text(ANSWER)
        conversation.note_heard("Tomorrow", 2.1)
        conversation.note_heard("Tomorrow starts dry,", 2.7)
        log.append_all(conversation.take_events())


def test_a_resumed_session_closes_the_open_turn_as_interrupted_with_what_was_heard(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    killed_mid_reply(path)

    open_session(path)[0].close()  # resumed, then stopped before anything was said
    log, resumed = open_session(path)
    with log:
        request = resumed.submit("And on Sunday?")
        log.append_all(resumed.take_events())

    assert request is not None
    assert request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry,", interrupted=True),
        UserText("And on Sunday?"),
    )
    events = [entry.event for entry in load_session(path).events]
    assert [e for e in events if isinstance(e, TurnLost)][:1] == [TurnLost(1, "Tomorrow starts dry,", 2.7)]
    assert sum(isinstance(e, TurnLost) and e.turn == 1 for e in events) == 1  # closed once, in the log
    assert resumed.has_seen("in-1")


def test_a_torn_progress_line_falls_back_to_the_last_whole_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    killed_mid_reply(path)
    with path.open("ab") as file:
        file.write(b'{"v": 2, "seq": 5, "type": "heard", "turn": 1, "heard": "Tomorrow starts dry, th')

    log, resumed = open_session(path)
    log.close()

    assert resumed.history == (UserText(QUESTION), AssistantText("Tomorrow starts dry,", interrupted=True))
    assert load_session(path).torn_tail is None


def test_a_turn_killed_before_anything_was_heard_leaves_its_question_pending(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionLog.create(path) as log:
        conversation = Conversation()
        conversation.submit(QUESTION)
        conversation.add_text(ANSWER)
        log.append_all(conversation.take_events())

    log, resumed = open_session(path)
    log.close()

    assert resumed.history == ()
    request = resumed.submit("in Paris")
    assert request is not None
    assert request.items == (UserText(f"{QUESTION} in Paris"),)


OLD_LOG = [  # version 1, before progress lines: killed mid-turn after an earlier whole turn
    {"v": 1, "seq": 0, "type": "session"},
    {"v": 1, "seq": 1, "type": "input", "text": "Hello.", "input_id": None},
    {"v": 1, "seq": 2, "type": "turn_start", "turn": 1},
    {"v": 1, "seq": 3, "type": "item", "item": {"role": "user", "text": "Hello."}},
    {"v": 1, "seq": 4, "type": "item", "item": {"role": "assistant", "text": "Hi there."}},
    {"v": 1, "seq": 5, "type": "turn_end", "turn": 1, "cancelled": False, "generated": "Hi there.",
     "heard": "Hi there.", "cut_s": None},
    {"v": 1, "seq": 6, "type": "input", "text": QUESTION, "input_id": None},
    {"v": 1, "seq": 7, "type": "turn_start", "turn": 2},
]  # fmt: skip


def test_an_old_log_without_progress_lines_still_resumes(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in OLD_LOG))

    log, resumed = open_session(path)
    with log:
        request = resumed.submit("in Paris")
        log.append_all(resumed.take_events())

    assert request is not None
    assert request.items == (UserText("Hello."), AssistantText("Hi there."), UserText(f"{QUESTION} in Paris"))
    assert TurnLost(2) in [entry.event for entry in load_session(path).events]


def test_log_show_tells_a_stop_mid_reply_and_a_log_that_ends_mid_reply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    room = Room()
    with SessionLog.create(tmp_path / "stopped.jsonl") as log:
        ask(room)
        room.synthesize(room.stream(1, REPLY))
        room.play(1, 3 * WORD + WORD // 2)
        room.engine.handle(CloseSession())
        log.append_all(room.engine.conversation.take_events())
    killed_mid_reply(tmp_path / "killed.jsonl")

    assert main(["log", "show", str(tmp_path / "stopped.jsonl")]) == 0
    stopped = capsys.readouterr().out
    assert "heard       Tomorrow starts dry," in stopped
    assert "generated but not heard: then rain moves in from the west." in stopped
    assert main(["log", "show", str(tmp_path / "killed.jsonl")]) == 0
    assert "(the log ends mid-reply; heard so far: Tomorrow starts dry,)" in capsys.readouterr().out

    open_session(tmp_path / "killed.jsonl")[0].close()
    assert main(["log", "show", str(tmp_path / "killed.jsonl")]) == 0
    resumed = capsys.readouterr().out
    assert "heard       Tomorrow starts dry," in resumed
    assert "closed on resume: cut at 2.70 s after what was heard" in resumed


def test_progress_of_a_reply_cannot_claim_words_it_never_had() -> None:
    conversation = Conversation()
    conversation.submit(QUESTION)
    conversation.add_text(ANSWER)
    with pytest.raises(Exception, match="not a prefix"):
        conversation.note_heard("Sunday is dry")
    assert not [e for e in conversation.take_events() if isinstance(e, ReplyHeard)]
