"""What the engine asks drivers to do; each is carried out outside the engine and may report back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from voice.audio.block import AudioBlock
from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall
from voice.conversation.ledger import SampleSpan


@dataclass(frozen=True)
class Transcribe:
    """Run ASR on one utterance; answer with TranscriptReady in utterance order.

    ``over_reply``: said while a turn was in flight, so the assistant's voice may be in it (ASR's most
    careful path, the slowest: when a cut-in ends at a short pause, its answer waits for it).
    """

    utterance: int
    audio: AudioBlock
    over_reply: bool = False
    context: str = ""  # in the quiet, what the assistant last asked as far as it was heard: ASR's prompt


@dataclass(frozen=True)
class DropTranscription:
    """An early transcription the user talked past: skip it, or abandon it on a server; no answer is due."""

    utterance: int


@dataclass(frozen=True)
class JudgeTurnEnd:
    """Ask the end-of-turn model whether the user finished at this pause; answer with TurnEndJudged.

    ``audio`` is the whole utterance so far (the turn up to the pause). Without a model no answer is
    due: the VAD's longer silence then ends the turn.
    """

    utterance: int
    audio: AudioBlock


@dataclass(frozen=True)
class JudgeSpeaker:
    """Score ``audio`` against the conversation's voiceprint; answer with SpeakerJudged(``stretch``).

    ``before_transcript``: the audio of a transcription, judged on ASR's worker ahead of it, so its
    verdict is in before its words; otherwise a stretch of voice still going on, judged at once.
    """

    stretch: int
    audio: AudioBlock
    before_transcript: bool = False


@dataclass(frozen=True)
class KeepVoice:
    """The stretch judged as ``stretch`` was the speaker's and took a turn: fold it into the voiceprint
    (the first one enrolls the conversation's speaker)."""

    stretch: int


@dataclass(frozen=True)
class SendRequest:
    """Stream this request from the LLM after ``delay_s`` (non-zero only for a retry)."""

    request: Request
    delay_s: float = 0.0


@dataclass(frozen=True)
class CancelTurn:
    """Final: stop the LLM stream, tools and synthesis of this turn (a server's call in flight is left).

    ``discarded``: a preemptive request (sent at a pause judged the end of the turn) that the user
    talked past before its reply was heard; it is reported apart from the turns.
    """

    turn: int
    discarded: bool = False


@dataclass(frozen=True)
class Synthesize:
    """Speak chunk ``chunk`` (numbered from 0 per turn); answer with SynthesisReady in chunk order."""

    turn: int
    chunk: int
    text: str


@dataclass(frozen=True)
class Play:
    """Queue this audio after the turn's audio queued before it.

    ``at`` is where it starts in the turn's audio (0 starts the turn's audio afresh, as after a
    retry); ``words`` are its words' sample spans from its first sample. The playback sink counts
    how much of the turn's audio has played in these terms.
    """

    turn: int
    audio: AudioBlock
    at: int = 0
    words: tuple[SampleSpan, ...] = ()


@dataclass(frozen=True)
class PausePlayback:
    """Silence within one block, keeping the queued audio; report progress right after."""

    turn: int


@dataclass(frozen=True)
class ResumePlayback:
    """Play on after a pause; with ``replay_from``, from that sample of the turn's audio (the start of the
    word the pause cut), which the buffer takes back if it already handed it out."""

    turn: int
    replay_from: int | None = None


@dataclass(frozen=True)
class StopPlayback:
    """Silence within one block (with a short fade) and drop the turn's queued audio."""

    turn: int


@dataclass(frozen=True)
class RunTool:
    turn: int
    call: ToolCall


@dataclass(frozen=True)
class SpeakNotice:
    """Say a short message outside the conversation (an LLM failure the user should know about)."""

    text: str


EngineAction: TypeAlias = (
    Transcribe
    | DropTranscription
    | JudgeTurnEnd
    | JudgeSpeaker
    | KeepVoice
    | SendRequest
    | CancelTurn
    | Synthesize
    | Play
    | PausePlayback
    | ResumePlayback
    | StopPlayback
    | RunTool
    | SpeakNotice
)
