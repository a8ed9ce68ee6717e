"""LLM failures in a real conversation: a loopback server on real sockets fails, the assistant copes.

Retriable failures before anything was heard are retried (the retried reply plays cleanly from its start);
a failure it cannot retry is told to the user aloud and the turn ends with nothing invented.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fault_llm import Exchange, FaultServer, delta_chunk, finish_chunk
from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE
from voice.audio.wav import read_wav
from voice.components import SpeechModels
from voice.config.llm import resolve_llm_config
from voice.engine.notices import FAILURE_NOTICE
from voice.sim.run import run_scenario
from voice.sim.scenario import RealLlm, Scenario, UserCue

REPLY = ["Hello", " there,", " how", " can", " I", " help?"]


def stream_reply(exchange: Exchange) -> None:
    exchange.send_head()
    for word in REPLY:
        exchange.send_event(delta_chunk(word))
    exchange.send_event(finish_chunk())
    exchange.send_event("[DONE]")
    exchange.end_chunks()


def first_fails_then_answers(failure: str) -> Any:
    def script(exchange: Exchange) -> None:
        if len(exchange.server_requests) > 1:
            stream_reply(exchange)
        elif failure == "503":
            exchange.respond(503, {"error": {"code": "overloaded"}})
        else:  # the stream breaks after the first words, before any of them could be heard
            exchange.send_head()
            for word in ["Well", " hello", " there,", " my", " friend,"]:  # enough for a first spoken chunk
                exchange.send_event(delta_chunk(word))
            exchange.reset()

    return script


def converse(server: FaultServer, out: Path, models: SpeechModels) -> dict[str, Any]:
    scenario = Scenario(
        AUDIO / "scenarios" / "llm-fault.json",
        RealLlm(server.url, "test-model"),
        (UserCue(AUDIO / "hello-there.wav", at_s=0.5),),
        end_s=8.0,
    )
    config = resolve_llm_config(server.url, "test-model", None, {})
    return run_scenario(scenario, out, llm_config=config, models=models)


def sounding_span(path: Path) -> tuple[float, float]:
    """When the speaker really made sound: its first and last audible 10 ms, in seconds."""
    samples = read_wav(path).samples
    frames = samples[: len(samples) // 160 * 160].reshape(-1, 160)
    loud = np.flatnonzero(np.sqrt(np.mean(frames**2, axis=1)) > 0.01)
    return float(loud[0]) * 160 / ENGINE_RATE, float(loud[-1] + 1) * 160 / ENGINE_RATE


@pytest.mark.models
@pytest.mark.parametrize("failure", ["503", "reset-mid-stream"])
def test_a_retriable_failure_before_anything_was_heard_is_retried(
    failure: str, speech_models: SpeechModels, tmp_path: Path
) -> None:
    with FaultServer(first_fails_then_answers(failure)) as server:
        report = converse(server, tmp_path, speech_models)
        assert len(server.requests) == 2

    (turn,) = report["turns"]
    assert turn["reply"] == turn["spoken"] == "Hello there, how can I help?"
    assert not turn["interrupted"]
    first, last = sounding_span(tmp_path / "speaker.wav")
    # the retry's audio is counted from its own start: the report brackets what really sounded,
    # give or take piper's short silence at either end of a chunk
    assert turn["audio_start_s"] <= first < turn["audio_start_s"] + 0.3
    assert last <= turn["audio_end_s"] < last + 0.3


@pytest.mark.models
def test_a_failure_that_cannot_be_retried_is_told_aloud(speech_models: SpeechModels, tmp_path: Path) -> None:
    with FaultServer(
        lambda exchange: exchange.respond(401, {"error": {"code": "invalid_api_key"}})
    ) as server:
        report = converse(server, tmp_path, speech_models)
        assert len(server.requests) == 1

    (turn,) = report["turns"]
    assert turn["error"] == "unauthorized"
    assert turn["spoken"] == ""
    assert report["notices"] == [FAILURE_NOTICE]
    first, last = sounding_span(tmp_path / "speaker.wav")
    assert last - first > 1.0  # the notice was spoken
