"""Prints the conversation as it happens: what the user said, what the assistant said and where it was cut."""

from __future__ import annotations

from collections.abc import Callable

from voice.client_events import (
    Failure,
    InputTranscript,
    ResponseDone,
    ResponseInterrupted,
    StateChanged,
    StreamEvent,
)


class Narrator:
    """A subscriber of the event stream: one line per input, finished reply, cut, failure, and the
    wake word's sleeping and waking."""

    def __init__(self, write: Callable[[str], None] = print) -> None:
        self._write = write
        self._asleep = False

    def __call__(self, event: StreamEvent) -> None:
        match event:
            case InputTranscript(text=text):
                self._write(f"you:       {text}")
            case ResponseDone(text=text) if text:
                self._write(f"assistant: {text}")
            case ResponseInterrupted(heard=heard):
                self._write(f"assistant: {heard or '(cut before a word was heard)'}  [interrupted]")
            case Failure(code=code, message=message):
                self._write(f"(failed: {code}: {message})")
            case StateChanged(state="asleep"):
                self._asleep = True
                self._write("(asleep)")
            case StateChanged(state="listening") if self._asleep:
                self._asleep = False
                self._write("(awake: listening)")
            case StateChanged():
                self._asleep = False
