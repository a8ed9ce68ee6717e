"""A speech server's transcript passes the same word guard as whisper's, and its prompt is the context."""

from __future__ import annotations

import numpy as np
import pytest
from wyoming.asr import Transcript as WyomingTranscript

from tests.support.fault_llm import Exchange, FaultServer
from tests.support.fault_wyoming import FaultWyoming
from voice.asr.guard import UnusableTranscript, guarded
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.speech_backends import transcriber_for

QUESTION = read_wav("audio/what-weather.wav")
LOOP = "Yes. " * 12


def test_a_looping_wyoming_transcript_is_dropped_with_why() -> None:
    with (
        FaultWyoming(lambda peer: peer.send(WyomingTranscript(text=LOOP).event())) as server,
        transcriber_for(server.url) as transcriber,
        pytest.raises(UnusableTranscript, match="repeats 'yes' 12 times"),
    ):
        guarded(transcriber).transcribe(QUESTION)


def test_an_openai_server_gets_the_last_sentence_heard_as_its_prompt_and_its_loop_is_dropped() -> None:
    def answer(exchange: Exchange) -> None:
        exchange.respond(200, {"text": LOOP})

    with FaultServer(answer) as server, transcriber_for(server.url) as transcriber:
        with pytest.raises(UnusableTranscript):
            guarded(transcriber).transcribe(QUESTION, context="I shuffled the deck. Pick a card.")
        body = server.requests[0].body
    assert b'name="prompt"\r\n\r\nPick a card.' in body


def test_words_from_a_server_where_there_was_no_voice_are_dropped() -> None:
    silence = AudioBlock(np.zeros(ENGINE_RATE, dtype=np.float32), ENGINE_RATE)
    with (
        FaultServer(lambda exchange: exchange.respond(200, {"text": "Thank you."})) as server,
        transcriber_for(server.url) as transcriber,
        pytest.raises(UnusableTranscript, match=r"only 0\.00 s of voice"),
    ):
        guarded(transcriber).transcribe(silence)
