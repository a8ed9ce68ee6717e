"""The durable session log: append, reload, resume, and survive being killed at any instant."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from voice.cli import main
from voice.conversation.continuation import Conversation
from voice.conversation.items import AssistantText
from voice.conversation.log_records import ItemCommitted, TurnEnded
from voice.conversation.session_log import LOG_VERSION, SessionLog, load_session
from voice.errors import SessionLogError


def interrupted_session(path: Path) -> Conversation:
    """A session in which the user cut in after hearing "Tomorrow starts dry,"."""
    conversation = Conversation()
    with SessionLog.create(path) as log:
        conversation.submit("What will the weather be like tomorrow?")
        conversation.add_text("Tomorrow starts dry, then rain moves in.")
        conversation.cut_in("Tomorrow starts dry,", cut_s=3.3)
        conversation.submit("Sorry, I meant on Sunday.")
        conversation.add_text("On Sunday it stays dry.")
        conversation.complete()
        log.append_all(conversation.take_events())
    return conversation


def test_reloading_rebuilds_the_history_exactly(tmp_path: Path) -> None:
    conversation = interrupted_session(tmp_path / "s.jsonl")

    loaded = load_session(tmp_path / "s.jsonl")

    assert loaded.torn_tail is None
    assert loaded.conversation().history == conversation.history
    assert [e.seq for e in loaded.events] == list(range(1, len(loaded.events) + 1))


def test_the_interrupted_item_is_written_before_the_turn_end(tmp_path: Path) -> None:
    interrupted_session(tmp_path / "s.jsonl")

    events = [logged.event for logged in load_session(tmp_path / "s.jsonl").events]
    heard = events.index(ItemCommitted(AssistantText("Tomorrow starts dry,", interrupted=True)))

    assert isinstance(events[heard + 1], TurnEnded)
    assert events[heard + 1].cancelled


def test_every_line_is_versioned_and_numbered(tmp_path: Path) -> None:
    interrupted_session(tmp_path / "s.jsonl")

    records = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]

    assert records[0]["type"] == "session"
    assert {r["v"] for r in records} == {LOG_VERSION}
    assert [r["seq"] for r in records] == list(range(len(records)))


def test_a_torn_last_line_is_reported_and_cut_off_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conversation = interrupted_session(path)
    with path.open("ab") as file:
        file.write(b'{"v": 1, "seq": 99, "type": "inp')

    loaded = load_session(path)
    assert loaded.torn_tail == '{"v": 1, "seq": 99, "type": "inp'
    assert loaded.conversation().history == conversation.history

    log, _ = SessionLog.resume(path)
    with log:
        resumed = loaded.conversation()
        resumed.submit("Thanks.")
        log.append_all(resumed.take_events())
    reloaded = load_session(path)
    assert reloaded.torn_tail is None
    assert reloaded.conversation().pending_input == "Thanks."


def test_a_damaged_line_before_the_end_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    interrupted_session(path)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = "garbage\n"
    path.write_text("".join(lines))

    with pytest.raises(SessionLogError, match=r"s\.jsonl:3: not a JSON object"):
        load_session(path)


def test_a_gap_in_sequence_numbers_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    interrupted_session(path)
    lines = path.read_text().splitlines(keepends=True)
    del lines[2]
    path.write_text("".join(lines))

    with pytest.raises(SessionLogError, match="sequence number 3, expected 2"):
        load_session(path)


def test_log_show_prints_who_said_what_and_where_it_was_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    interrupted_session(tmp_path / "s.jsonl")

    assert main(["log", "show", str(tmp_path / "s.jsonl")]) == 0
    out = capsys.readouterr().out

    assert "user said   What will the weather be like tomorrow?" in out
    assert "heard       Tomorrow starts dry," in out
    assert "cut at 3.30 s; generated but not heard: then rain moves in." in out
    assert "assistant   On Sunday it stays dry." in out


def test_log_show_of_a_missing_file_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["log", "show", str(tmp_path / "nope.jsonl")]) == 1
    err = capsys.readouterr().err

    assert err.startswith("voice: error: cannot read session log")
    assert err.count("\n") == 1


WRITER = """
import sys
from voice.conversation.session_log import SessionLog
from pathlib import Path

path = Path(sys.argv[1])
if path.exists():
    log, loaded = SessionLog.resume(path)
    conversation = loaded.conversation()
else:
    from voice.conversation.continuation import Conversation
    log, conversation = SessionLog.create(path), Conversation()
n = 0
while True:
    n += 1
    conversation.submit(f"question {n} " + "x" * 3000)
    conversation.add_text("An answer that the user cut off halfway through.")
    conversation.cut_in("An answer that" if n % 2 else "")
    for event in conversation.take_events():
        log.append(event)
        log.flush()
        sys.stdout.write("ok\\n")
        sys.stdout.flush()
"""


@pytest.mark.slow
@pytest.mark.processes
def test_killing_the_writer_at_random_instants_loses_at_most_the_line_being_written(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    rng = random.Random(7)
    for _ in range(50):
        before = len(load_session(path).events) if path.exists() else 0
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path)],
            stdout=subprocess.PIPE,
            env=os.environ | {"PYTHONUNBUFFERED": "1"},
        )
        assert child.stdout is not None
        acknowledged = 0
        while acknowledged < 1 + rng.randrange(40):  # let it write a little, then kill it mid-stream
            assert child.stdout.readline() == b"ok\n"
            acknowledged += 1
        time.sleep(rng.random() * 0.01)
        child.send_signal(signal.SIGKILL)
        acknowledged += child.stdout.read().count(b"ok\n")
        child.stdout.close()
        child.wait()

        loaded = load_session(path)  # never fails, whatever the instant of the kill
        written = len(loaded.events) - before
        assert acknowledged <= written <= acknowledged + 1
        loaded.conversation()  # and the history rebuilds


class StuckDiskLog(SessionLog):
    """A log whose fsync hangs until released, like an SD card busy with a large write."""

    disk_free = threading.Event()

    def _sync(self) -> None:
        self.disk_free.wait(timeout=30)
        super()._sync()


def test_a_slow_fsync_never_holds_up_the_turn_that_asked_for_it(tmp_path: Path) -> None:
    StuckDiskLog.disk_free.set()  # creating the log syncs once, on the caller's thread
    log = StuckDiskLog.create(tmp_path / "slow.jsonl")
    StuckDiskLog.disk_free.clear()
    conversation = Conversation()
    conversation.submit("What's the weather?")

    log.append_all(conversation.take_events())  # a turn boundary: returns while the fsync still waits
    log.flush()  # and the lines reach the file though the disk is still busy

    assert '"turn_start"' in (tmp_path / "slow.jsonl").read_text()  # written, though not yet synced
    StuckDiskLog.disk_free.set()
    log.close()
    events = load_session(tmp_path / "slow.jsonl").events
    assert [type(logged.event).__name__ for logged in events] == ["InputReceived", "TurnStarted"]


class StuckWriteLog(SessionLog):
    """A log whose writes hang until released, like a disk whose page cache is full of dirty pages."""

    disk_free = threading.Event()

    def _write(self, seq: int, body: dict[str, object]) -> None:
        self.disk_free.wait(timeout=30)
        super()._write(seq, body)


def test_a_slow_write_never_holds_up_the_caller_and_lines_keep_their_order(tmp_path: Path) -> None:
    StuckWriteLog.disk_free.set()
    log = StuckWriteLog.create(tmp_path / "slow.jsonl")
    StuckWriteLog.disk_free.clear()
    conversation = Conversation()
    conversation.submit("What's the weather?")
    conversation.add_text("Tomorrow starts dry.")
    conversation.note_heard("Tomorrow", 1.0)
    conversation.note_heard("Tomorrow starts", 1.5)

    log.append_all(conversation.take_events())  # returns while the writer waits on the disk

    assert load_session(tmp_path / "slow.jsonl").events == ()
    StuckWriteLog.disk_free.set()
    log.flush()
    kinds = [type(logged.event).__name__ for logged in load_session(tmp_path / "slow.jsonl").events]
    assert kinds == ["InputReceived", "TurnStarted", "ReplyHeard", "ReplyHeard"]
    log.close()


def test_every_turn_boundary_reaches_the_disk_while_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut after a turn started or ended loses nothing up to it: each boundary is fsynced then,
    not only when the log is closed."""
    path = tmp_path / "s.jsonl"
    synced: list[list[str]] = []  # the event types in the file at each fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append([json.loads(line)["type"] for line in path.read_text().splitlines()])
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    def wait_for_sync_of(kind: str) -> None:
        deadline = time.monotonic() + 10
        while not any(kinds and kinds[-1] == kind for kinds in synced):
            assert time.monotonic() < deadline, f"no fsync after {kind}: {synced}"
            time.sleep(0.01)

    log = SessionLog.create(path)
    conversation = Conversation()
    conversation.submit("What's the weather?")
    log.append_all(conversation.take_events())
    wait_for_sync_of("turn_start")
    conversation.add_text("Tomorrow starts dry.")
    conversation.note_heard("Tomorrow starts dry.", 1.0)
    conversation.complete()
    log.append_all(conversation.take_events())
    wait_for_sync_of("turn_end")
    log.close()
