"""`voice chat`'s live terminal view: a Textual app drawn from the event stream, whose keys send commands.

It is a client of the stream like the kiosk page: it shows the state, the mic's level, your words (as you
say them, then as heard), the reply as it is heard (unheard words struck through after a cut, your
backchannels over it as small marks), a line of timings per turn, tool calls, errors and notices. It never
reads engine state; its keys go to :class:`Controls`. Events arrive on the driver's thread and are posted to
the app (``post_message`` is thread-safe).
"""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, Input

from voice.chat.view_widgets import STOP_MARK, Dialogue, Line, StatusBar, partial_text, reply_text
from voice.client_events import (
    SPOKEN_INPUT,
    Failure,
    InputBackchannel,
    InputLevel,
    InputPartial,
    InputStop,
    InputTranscript,
    ResponseCreated,
    ResponseDone,
    ResponseHeard,
    ResponseInterrupted,
    SpeechStarted,
    SpeechStopped,
    StateChanged,
    StreamEvent,
    ToolCalled,
    ToolFinished,
)
from voice.engine.inputs import CancelReply, EngineInput, MuteMicrophone, TextInput

TOOL_LINE_CHARS = 100  # a tool's arguments or output can be long; one line says enough


class Controls(Protocol):
    """What the view's keys ask of the conversation (carried out on the driver's loop)."""

    def start(self, view: ChatView) -> None:
        """Start the conversation; from now on its events and notices go to ``view``."""

    def send(self, event: EngineInput) -> None:
        """Feed the engine a client input: CancelReply, MuteMicrophone or TextInput."""

    def new_conversation(self) -> None:
        """End this conversation (heard words kept in its log) and start a fresh one in a new log."""

    def stop(self) -> None:
        """Stop the conversation (the turn in progress closes with what was heard); ``view.ended`` follows."""


class Arrived(Message):
    """An event from the stream, posted from the driver's thread."""

    def __init__(self, event: StreamEvent) -> None:
        super().__init__()
        self.event = event


class Said(Message):
    """A one-line notice (a device that vanished, a new session log)."""

    def __init__(self, text: str, fresh: bool = False) -> None:
        super().__init__()
        self.text = text
        self.fresh = fresh  # a new conversation starts with it


class Ended(Message):
    """The conversation has stopped: the app exits."""


@dataclass
class TurnShown:
    """What the view needs to draw one turn's reply and its timings line."""

    line: Line
    input_end: float | None  # where the speech it answers stopped (None for typed input)
    audio_start: float | None = None
    cut_in_at: float | None = None  # the user's speech onset while it played
    stop_sent: bool = False
    tools: dict[str, str] = field(default_factory=dict)  # call id -> tool name, until its result
    heard: str = ""  # what of the reply was heard so far
    unheard: str = ""  # what was generated and never heard, once it was cut
    nods: tuple[str, ...] = ()  # the user's backchannels over it

    def draw(self, heard: str | None = None, unheard: str | None = None) -> None:
        self.heard = self.heard if heard is None else heard
        self.unheard = self.unheard if unheard is None else unheard
        self.line.show(reply_text(self.heard, self.unheard, waiting=True, nods=self.nods))


class ChatView(App[None]):
    """The live view of one `voice chat`."""

    TITLE = "voice chat"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { layout: vertical; }
    #say { margin: 0 1; }
    """
    # Priority: a letter acts as it arrives, so those after t in a burst meet the focused box that takes them
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "stop_reply", "stop the reply", priority=True),
        Binding("m", "mute", "mute / unmute", priority=True),
        Binding("t", "type", "type", priority=True),
        Binding("n", "new_conversation", "new conversation", priority=True),
        Binding("q", "quit", "quit", priority=True),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
        Binding("escape", "leave_typing", "leave typing", show=False),
    ]

    def __init__(self, controls: Controls) -> None:
        super().__init__()
        self._controls = controls
        self.engine_state = "listening"
        self.muted = False
        self._quitting = False
        self._turn: TurnShown | None = None  # the turn in flight
        self._last_turn: TurnShown | None = None  # the turn shown last, in flight or not
        self._speech_stopped: float | None = None
        self._last_user: Line | None = None
        self._partial: Line | None = None  # your words as you say them, until their transcript
        self._notice: tuple[Line, str, int] | None = None  # the latest notice, its text, how many times

    # -- thread-safe ways in, for the driver's thread ---------------------------------------------

    def publish(self, event: StreamEvent) -> None:
        """A subscriber of the event stream: hands the event to the app's loop, never waiting."""
        self.post_message(Arrived(event))

    def say(self, text: str, fresh: bool = False) -> None:
        self.post_message(Said(text, fresh))

    def ended(self) -> None:
        self.post_message(Ended())

    # -- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Dialogue(id="dialogue")
        yield Input(placeholder="press t to type a message, Enter to send, Esc to leave", id="say")
        yield Footer()

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def dialogue(self) -> Dialogue:
        return self.query_one(Dialogue)

    def lines(self) -> list[Line]:
        return list(self.dialogue.query(Line))

    def on_mount(self) -> None:
        self.status.show()
        self.query_one("#say", Input).can_focus = False  # letters are keys until t is pressed
        self.set_focus(None)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.leave)
        self._controls.start(self)

    # -- the stream -------------------------------------------------------------------------------

    def on_arrived(self, message: Arrived) -> None:
        self.show_event(message.event)

    def show_event(self, event: StreamEvent) -> None:
        turn = self._turn
        match event:
            case InputLevel(dbfs=dbfs, voice=voice):
                self.status.show(dbfs=dbfs, voice=voice)
            case StateChanged(state=state, t=t):
                self.engine_state = state
                if state == "speaking" and turn is not None and turn.audio_start is None:
                    turn.audio_start = t
                self._show_state()
            case SpeechStarted(t=t):
                if turn is not None and self.engine_state == "speaking":
                    turn.cut_in_at = t
            case SpeechStopped(t=t):
                self._speech_stopped = t
            case InputPartial(text=text, final=final):
                self._show_partial(text, final)
            case InputTranscript(id=input_id, text=text, merged=merged):
                partial = self._partial if input_id.startswith(SPOKEN_INPUT) else None
                if merged and self._last_user is not None:
                    self._last_user.show(Text(f"{merged} {text}"))
                elif partial is not None:  # the live words become what was heard, in place
                    partial.remove_class("partial")
                    partial.show(Text(text))
                    self._partial, self._last_user = None, partial
                else:
                    self._last_user = self._add("you", Text(text))
            case InputStop() if self._last_user is not None:
                self._last_user.show(self._last_user.body + Text(f"  {STOP_MARK}", style="grey50"))
            case InputBackchannel(text=text):
                nodded = turn or self._last_turn  # or said just after the reply it nods to
                if nodded is not None and nodded.line.is_attached:
                    nodded.nods += (text,)
                    nodded.draw()
            case ResponseCreated():
                waiting = self._add("assistant", reply_text("", waiting=True))
                self._turn = self._last_turn = TurnShown(waiting, self._speech_stopped)
                self._speech_stopped = None
            case ResponseHeard(text=text) if turn is not None:
                turn.draw(text)
            case ResponseInterrupted(turn=number, heard=heard, unheard=unheard, audio_end_ms=end_ms):
                if turn is not None:
                    if heard or unheard or turn.nods:
                        turn.draw(heard, unheard)
                    else:
                        turn.line.remove()
                    self._add_turn_line(number, turn, {}, cut=True, audio_end_ms=end_ms)
                self._turn = None
            case ResponseDone(turn=number, text=text, metrics=metrics):
                if turn is not None:
                    if text or turn.nods:
                        turn.draw(text)
                    else:
                        turn.line.remove()
                    self._add_turn_line(number, turn, metrics, cut=False, audio_end_ms=None)
                self._turn = None
            case ToolCalled(id=call_id, name=name, arguments=arguments):
                if turn is not None:
                    turn.tools[call_id] = name
                self._add("tool", Text(_short(f"{name}({_arguments(arguments)})")))
            case ToolFinished(id=call_id, output=output, failed=failed):
                name = turn.tools.pop(call_id, "") if turn is not None else ""
                outcome = f"failed: {output}" if failed else output
                self._add("tool", Text(_short(f"{name} → {outcome}" if name else outcome)))
            case Failure(code=code, message=message):
                self._add("error", Text(_one_line(f"{code}: {message}")))

    def _show_partial(self, text: str, final: bool) -> None:
        """Your words so far on a dim line of their own, replaced as they grow; gone once final (the
        transcript took the line, or the speech gave no words)."""
        line = self._partial
        if final:
            if line is not None:
                line.remove()
            self._partial = None
        elif line is None or not line.is_attached:
            self._partial = self._add("you", partial_text(text), classes="partial")
        else:
            line.show(partial_text(text))

    def on_said(self, message: Said) -> None:
        if message.fresh:
            self.dialogue.remove_children()
            self._last_user = None
        last = self._notice
        if last is not None and last[0].is_attached and last[1] == message.text:
            self._notice = (last[0], message.text, last[2] + 1)  # a device repeating itself: counted
            last[0].show(Text(_one_line(f"{message.text} ({last[2] + 1} times)")))
            return
        self._notice = (self._add("notice", Text(_one_line(message.text)), classes="notice"), message.text, 1)

    def on_ended(self, _message: Ended) -> None:
        self.exit()

    def _add(self, who: str, body: Text, classes: str = "") -> Line:
        return self.dialogue.add(Line(who, body, classes))

    def _add_turn_line(
        self, number: int, turn: TurnShown, metrics: dict[str, float], cut: bool, audio_end_ms: float | None
    ) -> None:
        parts = []
        voice_to_voice = metrics.get("voice_to_voice_ms")
        if voice_to_voice is None and turn.input_end is not None and turn.audio_start is not None:
            voice_to_voice = (turn.audio_start - turn.input_end) * 1000  # as the engine measures it
        if voice_to_voice is not None:
            parts.append(f"voice-to-voice {voice_to_voice:.0f} ms")
        if cut:
            if audio_end_ms is None:
                parts.append("cut before it spoke")
            elif turn.cut_in_at is not None:
                reaction = audio_end_ms - turn.cut_in_at * 1000
                parts.append(f"you cut in: it stopped {reaction:.0f} ms after you began")
            else:
                parts.append("stopped with s" if turn.stop_sent else "stopped")
        resumed = metrics.get("false_barge_ins")
        if resumed:
            parts.append(f"went on after {resumed:.0f} pause{'s' if resumed != 1 else ''} for a noise")
        self._add(f"turn {number}", Text(" · ".join(parts) or "done"), classes="turn")

    def _show_state(self) -> None:
        self.status.muted = self.muted
        self.status.show(state=self.shown_state())

    def shown_state(self) -> str:
        """The engine's state as the stream names it, with muted as the kiosk shows it."""
        if self._quitting:
            return "stopping"
        if self.muted and self.engine_state == "listening":
            return "muted"
        return self.engine_state

    # -- keys -------------------------------------------------------------------------------------

    def action_stop_reply(self) -> None:
        if self._turn is not None:
            self._turn.stop_sent = True
        self._controls.send(CancelReply())

    def action_mute(self) -> None:
        self.muted = not self.muted
        self._controls.send(MuteMicrophone(self.muted))
        self._show_state()

    def action_new_conversation(self) -> None:
        self._controls.new_conversation()

    def action_type(self) -> None:
        box = self.query_one("#say", Input)
        box.can_focus = True
        self.set_focus(box)  # now, not after the keys already queued (box.focus() waits for them)

    def action_leave_typing(self) -> None:
        box = self.query_one("#say", Input)
        box.can_focus = False
        self.set_focus(None)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        text = message.value.strip()
        message.input.clear()
        if text:
            self._controls.send(TextInput(text, f"tui-{uuid.uuid4().hex[:12]}"))

    async def action_quit(self) -> None:
        self.leave()

    def leave(self) -> None:
        """Stop the conversation; the app exits once it has (Ctrl-C, q, SIGTERM)."""
        if self._quitting:
            return
        self._quitting = True
        self._show_state()
        self._controls.stop()


def _arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _short(text: str) -> str:
    text = _one_line(text)
    return text if len(text) <= TOOL_LINE_CHARS else text[: TOOL_LINE_CHARS - 1] + "…"
