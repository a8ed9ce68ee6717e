"""`voice chat` with its live terminal view: the conversation on its own thread, the view on the main one.

The device driver keeps its own asyncio loop on a thread, so drawing the screen never delays a mic
block (a barge-in is noticed between blocks); Textual owns the main thread and the terminal. Events
cross to the view with ``post_message`` (thread-safe, never waiting); the view's commands cross back
with ``call_soon_threadsafe`` and run on the driver's loop between blocks, as the kiosk feeds its
clients' commands.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path

from voice.chat.driver import DeviceConversation
from voice.chat.terminal_view import ChatView
from voice.client_events import Failure
from voice.conversation.session_log import SessionLog
from voice.engine.inputs import EngineInput
from voice.errors import VoiceError


class LiveChat:
    """Runs one DeviceConversation under the terminal view; the view's :class:`Controls`."""

    def __init__(self, seconds: float | None = None) -> None:
        self._seconds = seconds
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="voice-chat-driver", daemon=True)
        self._talk: DeviceConversation | None = None
        self._view: ChatView | None = None
        self._held: list[str] | None = None  # notices said while the screen waits for the view
        self._lock = threading.Lock()
        self._run: concurrent.futures.Future[None] | None = None
        self._failures: list[Failure] = []

    def say(self, line: str) -> None:
        """A notice (any thread): on the view while it runs, held for it while it starts, else on stderr."""
        with self._lock:
            view = self._view
            if view is None and self._held is not None:
                self._held.append(line)
                return
        if view is None:
            print(f"voice: {line}", file=sys.stderr, flush=True)
        else:
            view.say(line)

    def run(self, talk: DeviceConversation, failures: Sequence[Failure] = ()) -> Path | None:
        """Open the devices (a DeviceError says why not, before the screen changes), show the view
        until it quits or ``seconds`` of audio have passed, then stop the driver's loop and thread.
        ``failures`` (a tool server that did not start) are shown first. Returns the session log in
        use at the end (a new conversation has its own)."""
        try:
            self.open(talk, failures)
            self._held = []  # from here fd 2 is a pipe to ``say``: a line printed there would come back
            with screen_apart_from_native_stderr(self.say):
                self.view().run()
        finally:
            self.close()
        log = talk.runner.session_log
        return None if log is None else log.path

    def open(self, talk: DeviceConversation, failures: Sequence[Failure] = ()) -> None:
        """Start the driver's thread and open the devices on its loop; ``failures`` wait for the view."""
        self._talk, self._failures = talk, list(failures)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._open(), self._loop).result()

    def view(self) -> ChatView:
        return ChatView(self)

    async def _open(self) -> None:
        self.talk.open()

    @property
    def talk(self) -> DeviceConversation:
        if self._talk is None:
            raise RuntimeError("LiveChat.run has not been given a conversation")
        return self._talk

    # -- Controls: called on the view's thread ----------------------------------------------------

    def start(self, view: ChatView) -> None:
        session = self.talk.runner.session_log
        if session is not None:
            view.say(f"listening; talk any time (session log {session.path})")
        with self._lock:
            self._view, held, self._held = view, self._held or [], None
        for line in held:
            view.say(line)
        for failure in self._failures:
            view.publish(failure)
        self.talk.runner.events.subscribe(view.publish)
        self.talk.show_partials(True)  # the view draws your words as you say them
        self._run = asyncio.run_coroutine_threadsafe(self.talk.run(self._seconds), self._loop)
        self._run.add_done_callback(lambda _: view.ended())

    def send(self, event: EngineInput) -> None:
        self._on_loop(lambda: self.talk.runner.feed(event))

    def new_conversation(self) -> None:
        def fresh() -> None:
            current = self.talk.runner.session_log
            folder = current.path.parent if current is not None else Path.cwd()
            log = SessionLog.create(folder / f"chat-{datetime.now():%Y%m%d-%H%M%S-%f}.jsonl")
            self.talk.new_conversation(log)
            if self._view is not None:
                self._view.say(f"new conversation: session log {log.path}", fresh=True)

        self._on_loop(fresh)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self.talk.stop)

    def _on_loop(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the driver's loop between blocks; a failure it raises is a notice."""

        def guarded() -> None:
            try:
                job()
            except VoiceError as exc:
                self.say(str(exc))

        self._loop.call_soon_threadsafe(guarded)

    # -- ending -----------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the driver if it still runs, wait for it, and end its loop; its failure is raised here."""
        with self._lock:
            self._view = self._held = None
        try:
            if self._run is not None:
                if not self._run.done():
                    self.stop()
                self._run.result()
        finally:
            if self._thread.is_alive():
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join()
            self._loop.close()
            log = self.talk.runner.session_log
            if log is not None:
                log.close()  # a new conversation's log (the first is closed by its opener as well)


@contextlib.contextmanager
def screen_apart_from_native_stderr(say: Callable[[str], None]) -> Iterator[None]:
    """While the view owns the terminal, what C libraries write to fd 2 (ALSA's "underrun occurred")
    becomes notices instead of breaking the screen, and Textual draws on a copy of stdout's terminal."""
    screen = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace")
    readable, writable = os.pipe()
    kept = os.dup(2)
    os.dup2(writable, 2)
    os.close(writable)

    def forward() -> None:
        with os.fdopen(readable, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.strip():
                    say(line.strip())

    reader = threading.Thread(target=forward, name="voice-chat-stderr", daemon=True)
    reader.start()
    original = sys.__stderr__
    sys.__stderr__ = screen  # type: ignore[misc]  # Textual's Linux driver draws on it
    try:
        yield
    finally:
        sys.__stderr__ = original  # type: ignore[misc]
        os.dup2(kept, 2)  # the pipe's last writer closes: the reader ends
        os.close(kept)
        reader.join()
        screen.close()
