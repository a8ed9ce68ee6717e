"""The one stream of what happens: every consumer subscribes, nobody polls (docs/architecture.md §7).

The engine and the runtime publish; the session log view, the console narrator, the terminal view, the
simulation's events.jsonl and the websocket API subscribe.
"""

from __future__ import annotations

from collections.abc import Callable

from voice.client_events import StreamEvent

Subscriber = Callable[[StreamEvent], None]


class EventStream:
    """Hands every published event to every subscriber, in order, on the publisher's thread."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def publish(self, event: StreamEvent) -> None:
        for subscriber in self._subscribers:
            subscriber(event)
