"""The engine's outbox: the stream gets every event once, in order, and the state it last heard is known."""

from __future__ import annotations

from voice import client_events as stream
from voice.engine.outbox import Outbox


def test_events_are_taken_once_in_the_order_told() -> None:
    outbox = Outbox("listening")
    started, thinking = stream.SpeechStarted(0.5), stream.StateChanged("thinking", 1.2)
    outbox.emit(started)
    outbox.emit(thinking)
    assert outbox.take() == [started, thinking]
    assert outbox.take() == []


def test_the_state_last_told_follows_the_state_changes_and_nothing_else() -> None:
    outbox = Outbox("listening")
    outbox.emit(stream.StateChanged("user_speaking", 0.4))
    outbox.emit(stream.SpeechStarted(0.4))
    assert outbox.told_state == "user_speaking"
    outbox.take()
    assert outbox.told_state == "user_speaking"  # taking the events does not forget what was told
