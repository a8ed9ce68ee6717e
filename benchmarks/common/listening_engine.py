"""An engine that listens in virtual time, fed a signal block by block, whose requests are only noted: for the
benchmarks that ask when a turn ends and with what text (turn_end.py), with no reply."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.playback import PlaybackBuffer
from voice.cancel import CancelToken
from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall
from voice.engine.inputs import MicAudio
from voice.runtime import ActionRunner, Work
from voice.tts.port import Synthesis

BLOCK = ENGINE_RATE // 50  # 20 ms, as the mic hands them


def mic_blocks(signal: Samples) -> Iterator[AudioBlock]:
    """``signal`` as the mic's blocks, each stamped with its first sample (a shorter tail is left)."""
    for start in range(0, len(signal) - BLOCK + 1, BLOCK):
        yield AudioBlock(signal[start : start + BLOCK], ENGINE_RATE, start)


class NoVoice:
    """The synthesizer of a run that never gets a reply to speak."""

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        raise AssertionError("no reply is streamed here")


class Requests:
    """A thinker that only notes the requests; no reply ever comes."""

    def __init__(self) -> None:
        self.sent: list[Request] = []

    def send(self, request: Request, delay_s: float) -> None:
        self.sent.append(request)

    def stop_turn(self, turn: int, reason: str = "") -> None:
        pass

    def cancel(self, turn: int) -> None:  # what a tree from before stop_turn calls (--against)
        pass

    def run_tool(self, turn: int, call: ToolCall) -> None:
        raise AssertionError("no tools here")


def listening(engine: Any, transcriber: Any, end_of_turn: Any) -> tuple[ActionRunner, Requests]:
    """``engine`` with ``transcriber`` and ``end_of_turn``, run in the caller's thread, its requests noted."""
    requests = Requests()
    runner = ActionRunner(
        engine,
        transcriber,
        NoVoice(),
        requests,
        Work(threaded=False),
        PlaybackBuffer(ENGINE_RATE),
        end_of_turn=end_of_turn,
    )
    return runner, requests


def feed(runner: ActionRunner, block: AudioBlock) -> None:
    """One mic block into the runner, as the mic loop hands it."""
    runner.feed(MicAudio(block))
