"""One reply in flight: the request it answers, its text cut into pieces for the voice, and its playback.

A reply is the assistant's answer to one request (a retry is another attempt at the same request);
events and logs number it ``turn``, the name clients know. Its pieces are synthesized in order; those
of a failed attempt that come back late are stale and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voice.conversation.continuation import Request
from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.engine.actions import EngineAction, Play, Synthesize
from voice.engine.early_end import EarlyInput
from voice.engine.inputs import SynthesisReady
from voice.engine.reply_report import ReplyReport
from voice.engine.tool_runs import ToolRun
from voice.errors import ProtocolError
from voice.tts.chunker import SpeechChunker


@dataclass
class Reply:
    request: Request
    ledger: PlaybackLedger  # the conversation's reply in flight: its text, audio queued and played
    report: ReplyReport  # what the stream and the log hear of its playback
    chunker: SpeechChunker = field(default_factory=SpeechChunker)
    attempt: int = 1
    first_chunk: int = 0  # pieces numbered below this belong to a failed earlier attempt
    chunks_asked: int = 0
    chunks_done: int = 0
    llm_done: bool = False
    paused: bool = False  # its playback is paused (while the user talks, a cut-in is judged, or a hold waits)
    early: EarlyInput | None = None  # input taken at a short pause: playback waits for the hold
    tools: ToolRun = field(default_factory=ToolRun)
    trimmed: bool = False  # the request was trimmed once after a too-large refusal

    @property
    def number(self) -> int:
        return self.request.turn

    @property
    def audible(self) -> bool:
        """Its audio is playing: queued, not yet played, and not paused."""
        return not self.paused and self.ledger.playing

    def all_audio_played(self) -> bool:
        return self.llm_done and self.chunks_done == self.chunks_asked and not self.ledger.playing

    def speak(self, pieces: list[str]) -> list[EngineAction]:
        """Ask for the voice of the next pieces of text, numbered in order."""
        actions: list[EngineAction] = []
        for text in pieces:
            actions.append(Synthesize(self.number, self.chunks_asked, text))
            self.chunks_asked += 1
        return actions

    def stale(self, chunk: int) -> bool:
        """Piece ``chunk`` belongs to a failed earlier attempt."""
        return chunk < self.first_chunk

    def voiced(self, event: SynthesisReady) -> Play:
        """The next piece's voice is ready: its words enter the ledger and it is queued to play."""
        if event.chunk != self.chunks_done:
            raise ProtocolError(f"chunk {event.chunk} synthesized before chunk {self.chunks_done}")
        self.chunks_done += 1
        audio = event.synthesis.audio
        words = tuple(SampleSpan(word.start, word.end) for word in event.synthesis.words)
        at = self.ledger.queue_audio(audio.frames, list(words))
        return Play(self.number, audio, at, words)

    def retry(self, request: Request, ledger: PlaybackLedger) -> None:
        """Another attempt at the request: what the failed one streamed and queued is forgotten (the
        ledger keeps when the listener heard its start)."""
        self.request = request
        self.attempt += 1
        self.first_chunk = self.chunks_done = self.chunks_asked
        self.ledger, self.chunker = ledger, SpeechChunker()
