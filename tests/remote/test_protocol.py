"""The exchanges as each protocol defines them, against scripted servers on loopback sockets."""

from __future__ import annotations

import json

import numpy as np
from wyoming.asr import TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.tts import SynthesizeStopped

from tests.support.fault_llm import Exchange, FaultServer
from tests.support.fault_wyoming import FaultWyoming, Peer
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.speech_backends import synthesizer_for, transcriber_for

UTTERANCE = AudioBlock(np.full(ENGINE_RATE // 2, 0.05, dtype=np.float32), ENGINE_RATE)


def test_a_streamed_transcript_without_the_final_event_is_joined_from_its_chunks() -> None:
    def streams(peer: Peer) -> None:
        peer.send(TranscriptStart().event())
        for text in ("Turn on ", "the lights."):
            peer.send(TranscriptChunk(text=text).event())
        peer.send(TranscriptStop().event())

    with FaultWyoming(streams) as server, transcriber_for(server.url) as transcriber:
        assert transcriber.transcribe(UTTERANCE).text == "Turn on the lights."


def test_a_streaming_voice_gets_the_text_as_a_stream_and_answers_per_sentence() -> None:
    def per_sentence(peer: Peer) -> None:
        peer.audio(0.5)
        peer.audio(0.25, rate=16000)
        peer.send(SynthesizeStopped().event())

    with (
        FaultWyoming(per_sentence, streaming=True) as server,
        synthesizer_for(server.url + "?voice=v") as synthesizer,
    ):
        synthesis = synthesizer.synthesize("First one. Then **two** more.")
        received = server.received

    assert [event.type for event in received] == [
        "synthesize-start", "synthesize-chunk", "synthesize", "synthesize-stop"
    ]  # fmt: skip
    assert received[1].data["text"] == "First one. Then two more."  # markup is not read out
    assert received[0].data["voice"] == {"name": "v"}
    assert synthesis.audio.frames == ENGINE_RATE // 2 + ENGINE_RATE // 4  # each stream at its own rate
    assert synthesis.words[2].start >= ENGINE_RATE // 2  # "Then" is in the second sentence's audio


def test_a_voice_without_streaming_gets_one_synthesize_and_one_stream() -> None:
    with FaultWyoming(lambda peer: peer.audio(0.5)) as server, synthesizer_for(server.url) as synthesizer:
        synthesis = synthesizer.synthesize("Hello there.")

    assert [event.type for event in server.received] == ["synthesize"]
    assert synthesis.audio.frames == ENGINE_RATE // 2
    assert [timing.text for timing in synthesis.words] == ["Hello", "there."]


def test_an_utterance_goes_to_wyoming_as_16_bit_chunks_between_start_and_stop() -> None:
    with (
        FaultWyoming(lambda peer: peer.send(TranscriptStop().event())) as server,
        transcriber_for(server.url + "?language=en") as transcriber,
    ):
        transcriber.transcribe(UTTERANCE)
        received = server.received

    assert received[0].type == "transcribe"
    assert received[0].data == {"language": "en"}
    assert received[1].type == "audio-start"
    assert {key: received[1].data[key] for key in ("rate", "width", "channels")} == {
        "rate": ENGINE_RATE, "width": 2, "channels": 1
    }  # fmt: skip
    chunks = [event for event in received if event.type == "audio-chunk"]
    assert sum(len(chunk.payload or b"") for chunk in chunks) == UTTERANCE.frames * 2
    assert received[-1].type == "audio-stop"


def test_openai_transcription_posts_a_wav_and_reads_word_times_when_asked() -> None:
    def answer(exchange: Exchange) -> None:
        words = [{"word": "Hi", "start": 0.1, "end": 0.3}, {"word": " there.", "start": 0.3, "end": 0.6}]
        exchange.respond(200, {"text": " Hi there.", "words": words})

    with FaultServer(answer) as server, transcriber_for(server.url + "?model=small") as transcriber:
        heard = transcriber.transcribe(UTTERANCE, word_timings=True)
        request = server.requests[0]

    assert request.path == "/v1/audio/transcriptions"
    assert b'name="model"\r\n\r\nsmall' in request.body
    assert b'name="response_format"\r\n\r\nverbose_json' in request.body
    assert b"RIFF" in request.body
    assert heard.text == "Hi there."
    assert [(word.text, word.start_s) for word in heard.words] == [("Hi", 0.1), ("there.", 0.3)]


def test_openai_speech_asks_for_pcm_and_resamples_it_from_the_given_rate() -> None:
    def answer(exchange: Exchange) -> None:
        exchange.send_head(headers={"content-type": "audio/pcm"})
        tone = (np.sin(np.arange(22050) / 5.0) * 8000).astype("<i2").tobytes()
        for offset in range(0, len(tone), 4097):  # odd-sized pieces tear samples apart
            piece = tone[offset : offset + 4097]
            exchange.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        exchange.end_chunks()

    with (
        FaultServer(answer) as server,
        synthesizer_for(server.url + "?voice=nova&rate=22050") as synthesizer,
    ):
        synthesis = synthesizer.synthesize("One second of tone.")
        request = json.loads(server.requests[0].body)

    assert request == {
        "model": "tts-1",
        "voice": "nova",
        "input": "One second of tone.",
        "response_format": "pcm",
    }
    assert abs(synthesis.audio.frames - ENGINE_RATE) <= 2
    assert float(np.abs(synthesis.audio.samples).max()) > 0.2
