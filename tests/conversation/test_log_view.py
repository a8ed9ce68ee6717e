"""`voice log show`: a session log read back as who said what, what failed, and what was dropped."""

from __future__ import annotations

from pathlib import Path

from voice.conversation.continuation import Conversation
from voice.conversation.items import UserText
from voice.conversation.log_view import render_session
from voice.conversation.session_log import SessionLog, load_session


def test_a_failed_turn_a_duplicate_and_a_broken_part_are_told_apart_from_cuts(tmp_path: Path) -> None:
    conversation = Conversation()
    with SessionLog.create(tmp_path / "s.jsonl") as log:
        conversation.submit("What's the weather?", "in-1")
        conversation.add_text("Tomorrow starts dry, then rain.")
        conversation.fail("unavailable", "Tomorrow starts dry,", "accepted")
        conversation.submit("What's the weather?", "in-1")
        conversation.note_failure("asr", "RuntimeError: model gone")
        conversation.note_ignored("[coughing]", "no words", 3.5)
        log.append_all(conversation.take_events())

    text = render_session(load_session(tmp_path / "s.jsonl"))

    assert "failed (unavailable) after 'Tomorrow starts dry,' was heard" in text
    assert "input in-1 came again and was dropped" in text
    assert "asr failed: RuntimeError: model gone" in text
    assert "not words   no words ([coughing]) at 3.50 s: nothing asked" in text
    assert "heard" not in text.replace("was heard", "")  # no interrupted item was written


def test_a_reply_heard_in_full_before_the_user_spoke_over_its_tool_is_not_called_cut(tmp_path: Path) -> None:
    conversation = Conversation()
    with SessionLog.create(tmp_path / "s.jsonl") as log:
        conversation.submit("Check Sunday?", "in-1")
        conversation.add_text("Let me check.")
        conversation.cut_in("Let me check.", reply_finished=True)
        log.append_all(conversation.take_events())

    text = render_session(load_session(tmp_path / "s.jsonl"))

    assert "heard in full" in text
    assert "cut" not in text


def test_a_change_of_the_hold_is_logged_read_back_and_shown_with_its_reason(tmp_path: Path) -> None:
    conversation = Conversation()
    with SessionLog.create(tmp_path / "s.jsonl") as log:
        conversation.note_hold(638, 520, "the user went on after a 460 ms pause")
        conversation.submit("Set a timer for ten minutes.")
        log.append_all(conversation.take_events())

    session = load_session(tmp_path / "s.jsonl")
    text = render_session(session)

    assert "the hold before answering went from 520 to 638 ms: the user went on after a 460 ms pause" in text
    assert (
        Conversation.from_events(e.event for e in session.events).pending_input
        == "Set a timer for ten minutes."
    )


def test_a_backchannel_and_a_stop_are_logged_read_back_and_shown(tmp_path: Path) -> None:
    conversation = Conversation()
    with SessionLog.create(tmp_path / "s.jsonl") as log:
        conversation.submit("Tell me a story.", "speech-1")
        conversation.add_text("Once upon a time, a fox lived by a river.")
        conversation.note_backchannel("Mm-hmm.", 3.25)
        conversation.cut_in("Once upon a time,", 4.0)
        conversation.stop("Wait, stop.", "speech-3")
        log.append_all(conversation.take_events())

    session = load_session(tmp_path / "s.jsonl")
    text = render_session(session)

    assert "backchannel Mm-hmm.  (said over the reply at 3.25 s; it went on, nothing asked)" in text
    assert "user said   Wait, stop." in text
    assert "(a stop: the reply was cut; nothing is asked until the user speaks again)" in text
    rebuilt = Conversation.from_events(e.event for e in session.events)
    assert rebuilt.history == conversation.history
    assert rebuilt.history[-1] == UserText("Wait, stop.")
    assert rebuilt.pending_input is None
