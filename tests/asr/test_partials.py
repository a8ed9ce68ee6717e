"""Live partials (voice/asr/partials.py) driven by a scripted stream and mic, with a decoder stand-in.

The real whisper in the virtual room and through a kiosk is in tests/sim/test_partials.py and
tests/kiosk/test_partials.py.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable

import numpy as np

from voice import client_events as stream
from voice.asr.partials import EVERY_S, SEGMENT_S, LivePartials
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.errors import ModelError

BLOCK = ENGINE_RATE // 50  # 20 ms, as the room hands them
WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


class WordsPerHalfSecond:
    """Whisper as a stand-in: a word, and one more each half second of audio it is given; notes each call."""

    def __init__(self, seconds: float = 0.0, gate: threading.Event | None = None, gate_from: int = 0) -> None:
        self.seconds = seconds  # how long a decode takes (threaded tests)
        self.gate = gate  # decodes from the ``gate_from``-th on wait for it
        self.gate_from = gate_from
        self.heard: list[int] = []  # samples of each decode
        self.abandoned = 0  # decodes told to stop midway
        self.spans: list[tuple[float, float]] = []  # monotonic start and end of each decode

    def decode(self, samples: Samples, stop: Callable[[], bool] = lambda: False) -> str | None:
        started = time.monotonic()
        self.heard.append(len(samples))
        if self.gate is not None and len(self.heard) > self.gate_from:
            self.gate.wait(10)
        time.sleep(self.seconds)
        self.spans.append((started, time.monotonic()))
        if stop():  # as whisper looks between its encoder's pass and the text
            self.abandoned += 1
            return None
        return " ".join(WORDS[: len(samples) * 2 // ENGINE_RATE + 1])


class Room:
    """The stream and mic a driver would give LivePartials, one 20 ms block at a time."""

    def __init__(self, decoder: WordsPerHalfSecond, *, threaded: bool = False) -> None:
        self.decoder = decoder
        self.published: list[stream.StreamEvent] = []
        self.voiced_until = 0
        self.busy = False
        self.clock = 0
        self.partials = LivePartials(
            lambda: decoder,
            self.publish,
            lambda: self.voiced_until,
            yield_to=lambda: self.busy,
            threaded=threaded,
        )

    def publish(self, event: stream.StreamEvent) -> None:
        self.published.append(event)
        self.partials.see(event)  # it follows the stream it publishes on, as on a runner's

    def tell(self, event: stream.StreamEvent) -> None:
        self.publish(event)

    def blocks(self, seconds: float, *, voiced: bool = True, paced: bool = False) -> None:
        for _ in range(round(seconds * 50)):
            samples = np.full(BLOCK, 0.1 if voiced else 0.0, dtype=np.float32)
            self.clock += BLOCK
            if voiced:
                self.voiced_until = self.clock
            self.partials.hear(AudioBlock(samples, ENGINE_RATE, self.clock - BLOCK))
            if paced:
                time.sleep(0.02)

    def partial_events(self) -> list[stream.InputPartial]:
        return [event for event in self.published if isinstance(event, stream.InputPartial)]


def spoken(text: str, number: int = 1) -> stream.InputTranscript:
    return stream.InputTranscript(f"speech-{number}", text, None, 0.0)


def test_nothing_is_decoded_until_a_client_asks() -> None:
    room = Room(WordsPerHalfSecond())
    room.blocks(1.0, voiced=False)
    room.tell(stream.SpeechStarted(1.0))
    room.blocks(2.0)
    assert room.decoder.heard == []
    assert room.partial_events() == []

    room.partials.show(True)
    room.blocks(1.0)
    assert room.partial_events()


def test_words_grow_as_they_are_said_and_end_as_the_transcript() -> None:
    room = Room(WordsPerHalfSecond())
    room.partials.show(True)
    room.blocks(1.0, voiced=False)
    room.tell(stream.SpeechStarted(1.2))
    room.blocks(2.2)
    room.tell(stream.SpeechStopped(3.2))
    room.blocks(0.4, voiced=False)
    room.tell(spoken("one two three four five, said."))
    room.tell(stream.StateChanged("thinking", 3.6))
    room.blocks(0.1, voiced=False)

    shown = room.partial_events()
    live = [event for event in shown if not event.final]
    assert [len(event.text.split()) for event in live] == sorted(len(event.text.split()) for event in live)
    assert len(live) >= 3  # every half second of audio, from the VAD's pre-roll on
    assert live[0].t < 3.2  # while the user was speaking
    assert shown[-1] == stream.InputPartial("one two three four five, said.", True, shown[-1].t)
    assert len({event.text for event in live}) == len(live)  # the same words are not sent twice


def test_an_utterance_that_gives_no_words_ends_with_an_empty_final() -> None:
    room = Room(WordsPerHalfSecond())
    room.partials.show(True)
    room.tell(stream.SpeechStarted(0.5))
    room.blocks(1.5)
    room.tell(stream.SpeechStopped(1.5))
    room.tell(stream.StateChanged("thinking", 1.7))
    room.tell(stream.StateChanged("listening", 1.9))  # its transcript was empty: no input
    room.blocks(0.1, voiced=False)

    assert room.partial_events()[-1].final
    assert room.partial_events()[-1].text == ""


def test_speech_over_a_reply_is_decoded_only_once_it_cut_the_reply() -> None:
    room = Room(WordsPerHalfSecond())
    room.partials.show(True)
    room.tell(stream.OutputAudioStarted(1, 0.5))
    room.tell(stream.SpeechStarted(1.0))  # a cough, or the assistant's own echo, or the user
    room.blocks(1.5)
    assert room.decoder.heard == []  # not while its words may be the assistant's

    room.tell(stream.ResponseInterrupted(1, "Tomorrow", "starts dry", 1100.0, 1.6))
    room.blocks(0.6)
    assert room.partial_events()

    room.tell(stream.OutputAudioStopped(1, 1.6))
    room.tell(stream.OutputAudioStarted(2, 4.0))
    room.tell(stream.SpeechStarted(4.5))
    room.blocks(1.0)
    room.tell(stream.SpeechStopped(5.5))
    room.tell(stream.ResponseResumed(2, 5.9))  # it was not the user: the reply goes on
    room.blocks(0.5, voiced=False)
    after_cut = room.partial_events()
    assert after_cut[-1].final  # the first utterance's line was closed by the second's start
    assert all(event.t < 4.5 for event in after_cut)  # nothing of the cough was ever shown


def test_a_long_utterance_is_decoded_in_parts_that_keep_their_words() -> None:
    room = Room(WordsPerHalfSecond())
    room.partials.show(True)
    room.tell(stream.SpeechStarted(0.3))
    for _ in range(5):  # 15 s of speech with a short breath every 3 s
        room.blocks(2.8)
        room.blocks(0.2, voiced=False)

    most = round((SEGMENT_S + 0.3) * ENGINE_RATE)
    assert max(room.decoder.heard) <= most  # no decode hears more than a part
    last = room.partial_events()[-1].text.split()
    assert len(last) >= 26  # the first parts' words are kept: about two words a second throughout


def test_a_decoder_that_does_not_load_is_said_once_and_not_tried_again() -> None:
    published: list[stream.StreamEvent] = []
    loads: list[int] = []

    def load() -> WordsPerHalfSecond:
        loads.append(1)
        raise ModelError("the bundled whisper model is missing")

    partials = LivePartials(load, published.append, lambda: 10**9, threaded=False)
    partials.show(True)
    partials.see(stream.SpeechStarted(0.0))
    for index in range(200):
        partials.hear(AudioBlock(np.zeros(BLOCK, dtype=np.float32), ENGINE_RATE, index * BLOCK))

    assert loads == [1]
    [failure] = published
    assert isinstance(failure, stream.Failure)
    assert failure.code == "partials"
    assert "missing" in failure.message


def test_decodes_stand_aside_while_the_turn_needs_the_cores_and_take_at_most_half_the_time() -> None:
    room = Room(WordsPerHalfSecond(seconds=0.15), threaded=True)
    room.partials.show(True)
    try:
        room.tell(stream.SpeechStarted(0.0))
        room.busy = True  # a transcription or a reply's synthesis is asked for
        room.blocks(0.4, paced=True)
        assert room.decoder.heard == []

        room.busy = False
        room.blocks(1.0, paced=True)
    finally:
        room.partials.close()
    spans = room.decoder.spans
    assert len(spans) >= 2
    for (start, end), (next_start, _) in itertools.pairwise(spans):
        assert next_start - start >= EVERY_S - 0.01  # never more often than EVERY_S
        assert next_start - end >= (end - start) - 0.01  # a decode is followed by as long a rest


def test_a_late_decode_of_an_utterance_already_over_is_never_shown() -> None:
    gate = threading.Event()
    room = Room(WordsPerHalfSecond(gate=gate, gate_from=1), threaded=True)
    room.partials.show(True)
    try:
        room.tell(stream.SpeechStarted(0.0))
        while len(room.decoder.heard) < 2:  # the first decode is shown, the second waits on the gate
            room.blocks(0.1, paced=True)
        room.tell(stream.SpeechStopped(1.0))
        room.tell(spoken("one two"))
        room.blocks(0.1, paced=True)
        gate.set()
        room.blocks(0.3, paced=True)
    finally:
        room.partials.close()

    first, final = room.partial_events()
    assert not first.final
    assert final == stream.InputPartial("one two", True, final.t)  # the late decode came after: dropped


def test_a_transcription_asked_for_midway_abandons_the_decode_and_a_pause_starts_none() -> None:
    gate = threading.Event()
    room = Room(WordsPerHalfSecond(gate=gate), threaded=True)
    room.partials.show(True)
    try:
        room.tell(stream.SpeechStarted(0.0))
        while not room.decoder.heard:
            room.blocks(0.1, paced=True)
        room.busy = True  # the engine asked for a transcription while the decode ran
        gate.set()
        room.blocks(0.3, paced=True)
        room.blocks(0.1, voiced=False, paced=True)
        assert room.decoder.abandoned == 1
        room.busy = False
        room.blocks(0.6, voiced=False, paced=True)  # a pause: the early transcription is due any moment
    finally:
        room.partials.close()
    assert len(room.decoder.heard) == 1  # none began in the pause
    assert room.partial_events() == []
