"""Stand-ins the tests look into: a transcriber that notes its calls, a thinker that keeps its requests."""

from __future__ import annotations

import threading

from voice.asr.port import TimedWord, Transcript
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken
from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall
from voice.testing.stand_ins import Hears


class NotingTranscriber(Hears):
    """``Hears``, noting each call's audio, carefulness, cancel token and context.

    With ``raises`` every call fails with it; with ``gate`` each call waits until the gate is set
    (``started`` says a call is waiting).
    """

    def __init__(
        self,
        text: str = "",
        *,
        words: tuple[TimedWord, ...] = (),
        raises: Exception | None = None,
        gate: threading.Event | None = None,
    ) -> None:
        super().__init__(text, words=words)
        self.raises = raises
        self.gate = gate
        self.started = threading.Event()
        self.audio: list[AudioBlock] = []
        self.over_reply: list[bool] = []
        self.cancels: list[CancelToken | None] = []
        self.contexts: list[str] = []

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        self.audio.append(audio)
        self.over_reply.append(over_reply)
        self.cancels.append(cancel)
        self.contexts.append(context)
        self.started.set()
        if self.gate is not None:
            self.gate.wait(timeout=30)
        if self.raises is not None:
            raise self.raises
        return super().transcribe(audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel)


class RecordingThinker:
    """The LLM side as a stand-in: keeps every request sent and answers none (the test streams replies)."""

    def __init__(self) -> None:
        self.sent: list[Request] = []

    def send(self, request: Request, delay_s: float) -> None:
        self.sent.append(request)

    def stop_turn(self, turn: int, reason: str = "") -> None:
        pass

    def run_tool(self, turn: int, call: ToolCall) -> None:
        raise AssertionError("no tool is called here")
