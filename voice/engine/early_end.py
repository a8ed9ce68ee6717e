"""The input of a turn ended at a short pause, while the hold has yet to make that end certain.

The end-of-turn model and whisper took the pause for the end of the turn, so the request goes out at
once, but its reply plays only after the hold's silence. Until then the input is provisional: if the
user goes on, the request is discarded unheard and the utterance continues as one, transcribed whole.
So the stream hears that the user stopped, that the assistant is thinking, what they said and that a
response is on its way only once the turn's end is certain; of a discarded request it hears nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voice.audio.block import AudioBlock
from voice.client_events import StreamEvent


@dataclass
class EarlyInput:
    """What the user said up to a pause judged the end of their turn."""

    voiced_end: int  # where their voice stopped: the hold's silence counts from here
    audio: AudioBlock  # the utterance so far, joined with what follows if they go on
    over_reply: bool  # said over a reply: what follows takes ASR's careful path too
    pending_before: str | None = None  # the conversation's pending input before this input
    untold: list[StreamEvent] = field(default_factory=list)  # speech stopped, state, transcript, response
    told: bool = False  # the stream heard of it (the hold passed, or the turn failed or was cut)
