"""The browser as microphone and speaker, driven the way the kiosk server drives it.

The page is a stand-in that records what it is sent; the playback buffer and echo reference are real.
The real page in a real chromium is in tests/browser/.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from tests.support.stand_ins import RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo_reference import EchoReference
from voice.audio.playback import PlaybackBuffer
from voice.chat.driver import BACKLOG_S, DeviceConversation, DeviceSettings
from voice.components import SpeechModels, make_engine
from voice.kiosk.browser_audio import BUSY, EPOCH_S, IDLE_BLOCK_S, RELEASE_S, BrowserAudio
from voice.runtime import Work
from voice.testing.stand_ins import EvenSynthesizer, Hears

FRAME = 320  # 20 ms, as the page sends


class Page:
    """A connected page: keeps the reply audio the server sends it."""

    def __init__(self) -> None:
        self.received = bytearray()

    def send_audio(self, pcm: bytes) -> None:
        self.received += pcm

    def played(self) -> np.ndarray:
        return np.frombuffer(bytes(self.received), dtype="<i2").astype(np.float32) / 32768.0


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def speech(frames: int, seed: int = 1) -> bytes:
    samples = np.random.default_rng(seed).uniform(-0.5, 0.5, frames)
    return (samples * 32767).astype("<i2").tobytes()


async def opened(audio: BrowserAudio, buffer: PlaybackBuffer, mic: list[AudioBlock]) -> None:
    audio.open_output(buffer, lambda block: None)
    audio.open_input(mic.append)


def test_a_talking_page_is_the_mic_and_gets_as_much_reply_back_as_it_sent() -> None:
    clock = Clock()
    audio = BrowserAudio(clock)
    buffer = PlaybackBuffer(ENGINE_RATE)
    reply = np.linspace(-0.5, 0.5, 3 * FRAME, dtype=np.float32)
    buffer.enqueue(reply)
    mic: list[AudioBlock] = []
    page = Page()

    async def talk() -> None:
        await opened(audio, buffer, mic)
        for index in range(4):
            clock.now += 0.02
            assert audio.take_frame(page, speech(FRAME, index)) is None
        audio.close()

    asyncio.run(talk())

    assert [block.start for block in mic] == [0, 2 * FRAME]  # gathered into the driver's 40 ms blocks
    assert np.allclose(mic[1].samples * 32768, np.frombuffer(speech(FRAME, 2) + speech(FRAME, 3), "<i2"))
    sent = page.played()
    assert len(sent) == 4 * FRAME  # the reply, then silence: the page's clock paces the speaker
    assert np.allclose(sent[: 3 * FRAME], reply, atol=1e-4)
    assert not sent[3 * FRAME :].any()


def test_heard_is_what_the_page_reports_played_never_more_than_it_was_sent() -> None:
    clock = Clock()
    audio = BrowserAudio(clock)
    buffer = PlaybackBuffer(ENGINE_RATE)
    buffer.enqueue(np.full(10 * FRAME, 0.1, dtype=np.float32))
    page = Page()

    async def talk() -> list[int]:
        await opened(audio, buffer, [])
        speaker = audio.open_output(buffer, lambda block: None)
        heard = [speaker.position - speaker.latency_samples]  # as the driver reads an output
        for _ in range(3):
            audio.take_frame(page, speech(FRAME))
        heard.append(speaker.position - speaker.latency_samples)  # sent 960, nothing reported yet
        audio.take_position(page, 500)
        heard.append(speaker.position - speaker.latency_samples)
        audio.take_position(page, 400)  # a late report never takes back what was heard
        heard.append(speaker.position - speaker.latency_samples)
        audio.take_position(page, 10**9)  # nor claims more than was sent
        heard.append(speaker.position - speaker.latency_samples)
        audio.close()
        return heard

    assert asyncio.run(talk()) == [0, 0, 500, 500, 3 * FRAME]
    assert buffer.audio_played_at(500) == 500


def test_with_no_page_talking_silence_paces_the_clock_and_the_reply_plays_to_nobody() -> None:
    audio = BrowserAudio()
    buffer = PlaybackBuffer(ENGINE_RATE)
    buffer.enqueue(np.full(ENGINE_RATE // 10, 0.2, dtype=np.float32))
    mic: list[AudioBlock] = []

    async def idle() -> int:
        await opened(audio, buffer, mic)
        speaker = audio.open_output(buffer, lambda block: None)
        await asyncio.sleep(0.5)
        position = speaker.position
        audio.close()
        return position

    position = asyncio.run(idle())

    assert len(mic) >= 5
    assert [block.start for block in mic] == [sum(b.frames for b in mic[:i]) for i in range(len(mic))]
    assert not any(block.samples.any() for block in mic)
    assert position >= ENGINE_RATE // 10
    assert buffer.queued_frames == 0


def test_a_second_page_is_told_once_that_it_only_watches_and_may_talk_once_the_first_leaves() -> None:
    clock = Clock()
    audio = BrowserAudio(clock)
    buffer = PlaybackBuffer(ENGINE_RATE)
    first, second = Page(), Page()

    async def both() -> list[str | None]:
        await opened(audio, buffer, [])
        codes = []
        for _ in range(5):
            clock.now += 0.02
            audio.take_frame(first, speech(FRAME))
            refused = audio.take_frame(second, speech(FRAME))
            codes.append(refused.code if refused is not None else None)
        audio.peer_left(first)
        codes.append(None if audio.take_frame(second, speech(FRAME)) is None else "refused")
        audio.close()
        return codes

    assert asyncio.run(both()) == [BUSY, None, None, None, None, None]
    assert audio.holder is second
    assert len(second.received) == 2 * FRAME  # only its one accepted frame fetched reply audio


def test_a_page_that_stops_sending_is_released_to_the_silent_clock() -> None:
    clock = Clock()  # the page's silence is measured on it; the silent clock still ticks in real time
    audio = BrowserAudio(clock)
    buffer = PlaybackBuffer(ENGINE_RATE)
    page, other = Page(), Page()
    mic: list[AudioBlock] = []

    async def ticks(count: int) -> None:
        for _ in range(count):
            await asyncio.sleep(IDLE_BLOCK_S)

    async def stop_talking() -> tuple[bool, bool]:
        await opened(audio, buffer, mic)
        audio.take_frame(page, speech(FRAME))  # half a block: the driver gets it when the page goes
        blocks = len(mic)
        clock.now += RELEASE_S / 2
        await ticks(5)
        held_meanwhile = audio.holder is page and len(mic) == blocks  # no silence mixed into its audio
        clock.now += RELEASE_S
        while len(mic) < blocks + 3:  # its last words, then two of the silent clock's blocks
            await ticks(1)  # (never, if the page were not released: the wait_for below fails it)
        released = audio.holder is None
        other_refused = audio.take_frame(other, speech(FRAME)) is not None
        audio.close()
        return held_meanwhile, released and not other_refused

    held_meanwhile, released = asyncio.run(asyncio.wait_for(stop_talking(), 10))

    assert held_meanwhile
    assert released
    assert np.allclose(mic[0].samples * 32768, np.frombuffer(speech(FRAME), "<i2"))  # its last words first
    assert not any(block.samples.any() for block in mic[1:])
    assert [block.start for block in mic] == [sum(b.frames for b in mic[:i]) for i in range(len(mic))]


@pytest.mark.parametrize("size", [0, 3, 2 * ENGINE_RATE + 2])
def test_a_malformed_frame_is_an_error_and_changes_nothing(size: int) -> None:
    audio = BrowserAudio(Clock())
    buffer = PlaybackBuffer(ENGINE_RATE)
    page = Page()
    mic: list[AudioBlock] = []

    async def bad() -> str | None:
        await opened(audio, buffer, mic)
        failure = audio.take_frame(page, b"\x01" * size)
        audio.close()
        return None if failure is None else failure.code

    assert asyncio.run(bad()) == "bad_frame"
    assert audio.holder is None
    assert not page.received


def test_the_echo_reference_lines_up_with_where_the_page_plays_its_reply() -> None:
    """The page's speaker is 150 ms behind its mic: the reference must be that much behind too."""
    clock = Clock()
    audio = BrowserAudio(clock)
    buffer = PlaybackBuffer(ENGINE_RATE)
    reference = EchoReference(lead_ms=0)
    buffer.enqueue(np.zeros(ENGINE_RATE, dtype=np.float32))  # quiet, so the alignment may move
    page = Page()
    behind = round(0.15 * ENGINE_RATE)
    mic: list[AudioBlock] = []

    async def talk() -> None:
        audio.open_output(buffer, reference.played)
        audio.open_input(mic.append)
        for _ in range(40):
            clock.now += 0.02
            sent = len(page.received) // 2
            audio.take_position(page, max(0, sent - behind + FRAME))
            blocks = len(mic)
            audio.take_frame(page, speech(FRAME))
            if len(mic) > blocks:
                reference.for_mic(mic[-1])
        audio.close()

    asyncio.run(talk())

    assert reference.lag == behind


def page_conversation(
    audio: BrowserAudio, said: list[str], canceller: HeardMic | None = None
) -> DeviceConversation:
    """A conversation on the page's audio, with stand-in models; what it says goes to ``said``."""
    return DeviceConversation(
        make_engine(),
        SpeechModels(Hears(), EvenSynthesizer()),
        RecordingThinker(),
        Work(threaded=False),
        canceller,
        DeviceSettings(),
        None,
        open_input=audio.open_input,
        open_output=audio.open_output,
        say=said.append,
    )


def test_a_page_read_late_in_a_burst_reaches_the_conversation_whole() -> None:
    """Under load the kiosk's loop stalls, then reads the page's queued frames at once. 1.5 s of them
    is inside the driver's 2 s backlog, so none of the user's words may be dropped (20 ms blocks made
    that backlog 1 s, and a cut-in lost its first words)."""
    said: list[str] = []
    audio = BrowserAudio()
    talk = page_conversation(audio, said)
    page = Page()
    frames = 76  # 1.52 s
    handled: list[int] = []

    def after_block() -> None:
        handled.append(talk.clock)
        if talk.clock >= frames * FRAME:
            talk.stop()

    async def stalled_loop() -> None:
        talk.open()
        for index in range(frames):  # the loop was busy while the page went on talking
            audio.take_frame(page, speech(FRAME, index))
        await talk.run(on_block=after_block)

    asyncio.run(stalled_loop())

    assert said == []
    assert talk.device_counters()["dropped_blocks"] == 0
    block = DeviceSettings().block_ms * ENGINE_RATE // 1000
    assert handled == list(range(block, frames * FRAME + 1, block))  # every sample, in order


class HeardMic:
    """An echo canceller that cancels nothing and keeps every mic sample the conversation took."""

    def __init__(self) -> None:
        self.blocks: list[AudioBlock] = []

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        self.blocks.append(mic)
        return mic

    def rest(self, mic: AudioBlock) -> AudioBlock:
        self.blocks.append(mic)
        return mic


def test_a_loop_stalled_while_the_page_talks_loses_none_of_its_words_and_reopens_nothing() -> None:
    """Under 50 watchers the kiosk's loop stalled past the mic watchdog's second while waiting for the
    page's next frame; the watchdog woke before the loop had read the frames that came meanwhile,
    took the stall for a dead mic and reopened the devices, dropping what the user said (a cut-in
    then never stopped the reply)."""
    said: list[str] = []
    audio = BrowserAudio()
    heard = HeardMic()
    talk = page_conversation(audio, said, heard)
    page = Page()
    frames = 100  # 2 s, at the page's pace
    words = [speech(FRAME, index) for index in range(frames)]

    async def stalled_loop() -> None:
        loop = asyncio.get_running_loop()

        def send_frames() -> None:  # the page, on its own clock; the loop reads each frame as it comes
            for frame in words:
                time.sleep(FRAME / ENGINE_RATE)
                loop.call_soon_threadsafe(audio.take_frame, page, frame)

        def after_block() -> None:
            if talk.clock == 10 * FRAME:  # the loop is busy elsewhere, while the driver waits for a frame
                loop.call_later(0.01, time.sleep, 1.5)
            if talk.clock >= frames * FRAME:
                talk.stop()

        talk.open()
        sending = loop.run_in_executor(None, send_frames)
        await talk.run(on_block=after_block)
        await sending

    asyncio.run(stalled_loop())

    assert said == []  # no "the microphone delivered nothing" to every client, no reopen
    assert talk.device_counters()["reopened"] == 0
    assert talk.device_counters()["loop_stalls"] >= 1  # the watchdog did wake late, in the stall
    taken = np.concatenate([block.samples for block in heard.blocks])
    assert np.allclose(taken[: frames * FRAME] * 32768, np.frombuffer(b"".join(words), "<i2"))
    assert len(page.received) == 2 * frames * FRAME  # and every frame was answered with reply audio


def test_what_the_page_says_while_the_driver_reopens_the_devices_reaches_the_reopened_mic() -> None:
    """A loop stalled past the driver's mic watchdog reopens the devices; the page went on talking, and
    its words (the start of a question, under load) were dropped until the reopen."""
    clock = Clock()
    audio = BrowserAudio(clock)
    buffer = PlaybackBuffer(ENGINE_RATE)
    page = Page()
    first: list[AudioBlock] = []
    reopened: list[AudioBlock] = []

    async def reopen() -> None:
        await opened(audio, buffer, first)
        for index in range(2):
            audio.take_frame(page, speech(FRAME, index))
        audio.close()
        for index in range(2, 5):  # the driver waits before it opens the devices again
            clock.now += 0.02
            audio.take_frame(page, speech(FRAME, index))
        audio.open_input(reopened.append)
        for index in range(5, 7):
            clock.now += 0.02
            audio.take_frame(page, speech(FRAME, index))
        audio.close()

    asyncio.run(reopen())

    assert [block.start for block in first] == [0]
    assert [block.start for block in reopened] == [0, 3 * FRAME]  # a reopened stream counts from 0
    said = np.concatenate([block.samples for block in reopened]) * 32768
    assert np.allclose(said, np.frombuffer(b"".join(speech(FRAME, i) for i in range(2, 7)), "<i2"))
    assert reopened[0].device_time == first[0].device_time + 2 * FRAME / ENGINE_RATE  # stamps run on


def test_a_reopen_that_takes_long_keeps_the_newest_words_as_much_as_the_driver_backlog_holds() -> None:
    audio = BrowserAudio(Clock())
    buffer = PlaybackBuffer(ENGINE_RATE)
    page = Page()
    reopened: list[AudioBlock] = []
    frames = 150  # 3 s while the devices are closed

    async def long_reopen() -> None:
        await opened(audio, buffer, [])
        audio.close()
        for index in range(frames):
            audio.take_frame(page, speech(FRAME, index))
        audio.open_input(reopened.append)
        audio.close()

    asyncio.run(long_reopen())

    kept = round(BACKLOG_S * ENGINE_RATE) // FRAME
    assert [block.frames for block in reopened] == [kept * FRAME]
    newest = b"".join(speech(FRAME, index) for index in range(frames - kept, frames))
    assert np.allclose(reopened[0].samples * 32768, np.frombuffer(newest, "<i2"))
    assert reopened[0].device_time == EPOCH_S + (frames - kept) * FRAME / ENGINE_RATE
