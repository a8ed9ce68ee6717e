"""Prints the conversation as it happens: what the user said, what the assistant said and where it was cut."""

from __future__ import annotations

from collections.abc import Callable

from voice.client_events import Failure, InputTranscript, ResponseDone, ResponseInterrupted, StreamEvent


class Narrator:
    """A subscriber of the event stream: one line per input, finished reply, cut and failure."""

    def __init__(self, write: Callable[[str], None] = print) -> None:
        self._write = write

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
