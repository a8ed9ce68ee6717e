"""The session keeper: what clients are told about the kiosk, and when a new visitor gets a fresh start.

It carries the assistant's events out to clients, showing ``muted`` and ``asleep`` where the engine
says ``listening``; it carries clients' commands in; after ``fresh_after_s`` of quiet it starts a fresh
conversation in a new log (and, with a wake phrase, goes to sleep until the phrase is heard).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from voice.asr.port import Transcriber
from voice.client_events import SessionCreated, StateChanged, StreamEvent, event_json
from voice.engine.inputs import CancelReply, MuteMicrophone, TextInput
from voice.kiosk.assistant import KioskAssistant
from voice.kiosk.protocol import Command, ResetSession
from voice.kiosk.sessions import SessionFiles
from voice.kiosk.wake import Sleep, WakeGate
from voice.waking import ASLEEP

Publish = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class KeeperSettings:
    fresh_after_s: float = 120.0
    wake: str | None = None


class SessionKeeper:
    """Between the assistant and its clients; everything here runs on the asyncio loop."""

    def __init__(self, settings: KeeperSettings, files: SessionFiles, public: dict[str, Any]) -> None:
        self.settings = settings
        self.files = files
        self._public = public  # settings clients may see (never a token or key)
        self._publish: Publish = lambda event: None
        self._assistant: KioskAssistant | None = None
        self._loop = asyncio.get_running_loop()
        self._sleep = Sleep(self._woken)
        if settings.wake:
            self._sleep.fall_asleep()
        self._muted = False
        self._partials_wanted = False
        self._engine_state = "listening"
        self._shown = self._state()
        self._quiet_since = time.monotonic()

    def _woken(self) -> None:
        """Woken on any thread (the ASR worker hears the phrase): say so from the loop."""
        self._loop.call_soon_threadsafe(self._show)

    def gate(self, transcriber: Transcriber) -> Transcriber:
        """The transcriber the assistant should use: behind the wake phrase, if there is one."""
        if not self.settings.wake:
            return transcriber
        return WakeGate(transcriber, self.settings.wake, self._sleep)

    def attach(self, assistant: KioskAssistant, publish: Publish) -> None:
        self._assistant = assistant
        self._publish = publish
        assistant.events.subscribe(self._on_event)

    @property
    def assistant(self) -> KioskAssistant:
        if self._assistant is None:
            raise RuntimeError("the keeper has no assistant attached")
        return self._assistant

    # -- out to clients ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """``session.created``: enough for a page opened mid-conversation to be current."""
        assistant = self.assistant
        created = SessionCreated(
            assistant.session_log.path.stem, self._shown, assistant.history(), self._public
        )
        return event_json(created)

    def _on_event(self, event: StreamEvent) -> None:
        self._quiet_since = time.monotonic()
        if isinstance(event, StateChanged):
            self._engine_state = event.state
            self._show()
            return
        self._publish(event_json(event))

    def _state(self) -> str:
        if self._engine_state in ("listening", ASLEEP):  # asleep: the wake word's gate says so
            if self._muted:
                return "muted"
            if self._sleep.asleep:
                return "asleep"
        return self._engine_state

    def _show(self) -> None:
        if self._assistant is not None:  # asleep, only the wake phrase is heard: no words show before it
            self._assistant.show_partials(self._partials_wanted and not self._sleep.asleep)
        state = self._state()
        if state != self._shown:
            self._shown = state
            self._publish(event_json(StateChanged(state, self.assistant.clock_s)))

    # -- in from clients --------------------------------------------------------------------------

    def handle(self, command: Command) -> None:
        self._quiet_since = time.monotonic()
        assistant = self.assistant
        match command:
            case TextInput(text=text, input_id=input_id):
                self._sleep.wake()  # typing is as deliberate as the wake phrase
                self._show()
                assistant.type_text(text, input_id)
            case CancelReply():
                assistant.cancel_reply()
            case MuteMicrophone(muted=muted):
                self._muted = muted
                assistant.mute(muted)
                self._show()
            case ResetSession():
                self.fresh_conversation()

    def show_partials(self, wanted: bool) -> None:
        """Decode the user's words as they speak while some client wants them, and it is awake."""
        self._partials_wanted = wanted
        self._show()

    def fresh_conversation(self) -> None:
        """A new conversation in a new log; clients get its snapshot."""
        self.assistant.new_conversation(self.files.create())
        self._publish(self.snapshot())

    # -- quiet time -------------------------------------------------------------------------------

    async def watch(self) -> None:
        """After ``fresh_after_s`` without an event or command: a fresh conversation, and sleep."""
        limit = self.settings.fresh_after_s
        while True:
            await asyncio.sleep(min(1.0, limit / 4))
            idle = self._engine_state in ("listening", ASLEEP)
            if time.monotonic() - self._quiet_since < limit or not idle:
                continue
            if self.settings.wake and not self._sleep.asleep:
                self._sleep.fall_asleep()
                self._show()
            if self.assistant.inputs_taken:
                self.fresh_conversation()
            self._quiet_since = time.monotonic()
