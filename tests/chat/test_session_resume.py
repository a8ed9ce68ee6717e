"""`voice chat --session FILE` resumes: the history of the earlier session carries into the next request."""

from __future__ import annotations

from pathlib import Path

from voice.conversation.items import AssistantText, UserText
from voice.conversation.session_log import open_session


def test_a_session_resumes_with_its_history(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "kiosk.jsonl"
    log, conversation = open_session(path)
    with log:
        conversation.submit("What will the weather be like tomorrow?")
        conversation.add_text("Tomorrow starts dry, then rain.")
        conversation.cut_in("Tomorrow starts dry,")
        log.append_all(conversation.take_events())
    with path.open("ab") as file:
        file.write(b'{"v": 1, "seq": 9')  # the kiosk lost power mid-line

    log, resumed = open_session(path)
    with log:
        request = resumed.submit("Sorry, I meant on Sunday.")
        log.append_all(resumed.take_events())

    assert request is not None
    assert request.items == (
        UserText("What will the weather be like tomorrow?"),
        AssistantText("Tomorrow starts dry,", interrupted=True),
        UserText("Sorry, I meant on Sunday."),
    )
    log, again = open_session(path)
    log.close()
    assert again.pending_input == "Sorry, I meant on Sunday."
