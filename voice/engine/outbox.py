"""What the event stream is to hear from the engine, kept until the driver takes it."""

from __future__ import annotations

from voice import client_events as stream


class Outbox:
    """Events in the order the engine told them; ``take`` hands them over and starts afresh."""

    def __init__(self, state: str) -> None:
        self.told_state = state  # the state the stream last heard (a change told twice is told once)
        self._events: list[stream.StreamEvent] = []

    def emit(self, event: stream.StreamEvent) -> None:
        if isinstance(event, stream.StateChanged):
            self.told_state = event.state
        self._events.append(event)

    def take(self) -> list[stream.StreamEvent]:
        events, self._events = self._events, []
        return events
