"""The assistant as the kiosk drives it: the one module that touches the runtime and the driver.

It runs `voice chat`'s DeviceConversation on the kiosk's audio setup, feeds it what clients ask for
as engine events (all on the asyncio loop, between blocks), and starts a new conversation, in a new
session log, when the keeper says a new visitor came.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from voice.asr.partial_whisper import whisper_partials
from voice.asr.port import Transcriber
from voice.chat.driver import FIRST_RETRY_S, LAST_RETRY_S, DeviceConversation
from voice.client_events import Failure
from voice.components import make_engine
from voice.conversation.continuation import Conversation
from voice.conversation.items import item_to_json
from voice.conversation.session_log import SessionLog
from voice.engine.hold import Eagerness
from voice.engine.inputs import CancelReply, MuteMicrophone, TextInput
from voice.engine.overlap import OverlapPhrases
from voice.errors import DeviceError
from voice.event_stream import EventStream
from voice.kiosk.audio import AudioSetup
from voice.llm.port import ChatModel, ChatSettings
from voice.runtime import ChatModelThinker, Work
from voice.telemetry.attach import Telemetry
from voice.tools.toolbox import McpToolbox
from voice.waking import WakeWordGate


class KioskAssistant:
    """One DeviceConversation for the kiosk's whole life; conversations come and go inside it."""

    def __init__(
        self,
        model: ChatModel,
        settings: ChatSettings,
        audio: AudioSetup,
        conversation: Conversation,
        session_log: SessionLog,
        wrap_transcriber: Callable[[Transcriber], Transcriber] | None = None,
        toolbox: McpToolbox | None = None,
        eagerness: Eagerness = Eagerness.AUTO,
        overlap: OverlapPhrases | None = None,
        wake: WakeWordGate | None = None,
    ) -> None:
        self._reopened = 0  # device reopens seen so far: the notice after one is no error
        self.work = Work(threaded=True)
        specs = toolbox.specs if toolbox is not None else ()
        self._thinker = ChatModelThinker(model, settings, self.work, toolbox, specs)
        self._tool_failures = toolbox.failures if toolbox is not None else ()
        models = audio.models
        if wrap_transcriber is not None:
            models = replace(models, transcriber=wrap_transcriber(models.transcriber))
        self._talk = DeviceConversation(
            # only the conversation's speaker takes turns if the audio setup loaded what tells voices apart
            make_engine(
                conversation, eagerness, overlap, "anyone" if models.speaker is None else "conversation"
            ),
            models,
            self._thinker,
            self.work,
            audio.echo_canceller,
            audio.devices,
            session_log,
            open_input=audio.open_input,
            open_output=audio.open_output,
            say=self._say,
            partials=None if audio.mode == "none" else whisper_partials,  # silent: no words to show
            wake=None if audio.mode == "none" else wake,  # typed input only: there is nothing to hear
        )
        self.events: EventStream = self._talk.runner.events
        self._stopping = asyncio.Event()

    def attach(self, telemetry: Telemetry) -> None:
        """Metrics, health and traces follow this assistant's stream, log and work."""
        telemetry.attach(self._talk, self.work)

    # -- what clients see -------------------------------------------------------------------------

    @property
    def clock_s(self) -> float:
        return round(self._talk.clock / self._talk.buffer.rate, 3)

    @property
    def session_log(self) -> SessionLog:
        log = self._talk.runner.session_log
        if log is None:
            raise RuntimeError("the kiosk always runs with a session log")
        return log

    @property
    def inputs_taken(self) -> int:
        """Inputs the current conversation took (none: nobody talked to it yet)."""
        return self._talk.runner.inputs_taken

    def history(self) -> list[dict[str, Any]]:
        """The items the next request would carry: the history, then any unanswered input."""
        return [item_to_json(item) for item in self._talk.runner.history()]

    # -- what clients ask for ---------------------------------------------------------------------

    def type_text(self, text: str, input_id: str | None) -> None:
        self._talk.runner.feed(TextInput(text, input_id))

    def cancel_reply(self) -> None:
        self._talk.runner.feed(CancelReply())

    def mute(self, muted: bool) -> None:
        self._talk.runner.feed(MuteMicrophone(muted))

    def show_partials(self, enabled: bool) -> None:
        self._talk.show_partials(enabled)

    def new_conversation(self, session_log: SessionLog) -> None:
        """End the conversation (the turn in flight is cut, heard words kept in its log) and start a
        fresh one in ``session_log``; its turns number on, so late output of old turns is dropped."""
        self._talk.new_conversation(session_log)

    # -- running ----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Open the audio (retrying with backoff while it is missing) and run until ``stop``."""
        for line in self._tool_failures:  # the assistant runs without that server's tools, and says so
            self.events.publish(Failure("tools", line, t=self.clock_s))
        retry = FIRST_RETRY_S
        while not self._stopping.is_set():
            try:
                self._talk.open()
                break
            except DeviceError as exc:
                self._say(f"{exc}; trying again in {retry:g} s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), retry)
            retry = min(retry * 2, LAST_RETRY_S)
        else:
            return
        print("voice kiosk: audio devices open; listening", file=sys.stderr, flush=True)
        await self._talk.run()

    def stop(self) -> None:
        """End ``run`` soon (call on the loop); the turn in flight ends as interrupted, heard words kept."""
        self._stopping.set()
        self._talk.stop()

    def close(self) -> None:
        """After ``run``: end the turn in flight (if ``run`` never got the devices open, it is still
        there), stop the model's streams and the workers, flush the session log."""
        self._talk.end_session()
        self._thinker.stop_all()
        self.work.close()
        self.session_log.close()

    def _say(self, line: str) -> None:
        """A device notice: printed, and an ``error`` event unless it says the devices are back."""
        print(f"voice kiosk: {line}", file=sys.stderr, flush=True)
        reopened = self._talk.device_counters()["reopened"]
        if reopened > self._reopened:
            self._reopened = reopened
            return
        self.events.publish(Failure("audio", line, t=self.clock_s))
