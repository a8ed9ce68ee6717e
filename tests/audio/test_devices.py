"""Real sound devices through PortAudio, against a private PulseAudio null sink the tests start themselves."""

from __future__ import annotations

import argparse
import itertools
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import MicrophoneStream, SpeakerStream, list_devices
from voice.audio.playback import PlaybackBuffer
from voice.audio.sink_input import SinkInputControl
from voice.cli import devices
from voice.errors import DeviceError

RATE = ENGINE_RATE


class Recorder:
    """Collects the blocks a stream reports, from PortAudio's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks: list[AudioBlock] = []

    def __call__(self, block: AudioBlock) -> None:
        with self._lock:
            self._blocks.append(block)

    @property
    def blocks(self) -> list[AudioBlock]:
        with self._lock:
            return list(self._blocks)

    def audio(self) -> np.ndarray:
        blocks = self.blocks
        return np.concatenate([b.samples for b in blocks]) if blocks else np.zeros(0, dtype=np.float32)


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.02)


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else 0.0


def tone(seconds: float) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * 440 * np.arange(int(seconds * RATE)) / RATE)).astype(np.float32)


@pytest.mark.device
def test_speaker_audio_comes_back_through_the_monitor_and_stop_silences_it(pulse_device: str) -> None:
    heard, played = Recorder(), Recorder()
    buffer = PlaybackBuffer()

    with (
        MicrophoneStream(heard, device=pulse_device) as mic,
        SpeakerStream(buffer, device=pulse_device, on_played=played) as speaker,
    ):
        assert mic.latency_samples > 0
        assert speaker.latency_samples > 0
        # a busy sound server may start capturing late: a tone played before then never reaches the mic
        wait_until(lambda: len(heard.audio()) >= RATE // 5, "the mic delivers audio")
        buffer.enqueue(tone(1.0))
        wait_until(lambda: buffer.queued_frames == 0, "the tone was handed to the device")
        wait_until(
            lambda: rms(heard.audio()[-RATE // 2 :]) < 1e-3 < rms(heard.audio()), "the tone came and went"
        )

        loud = heard.audio()[np.abs(heard.audio()) > 0.1]
        assert len(loud) > RATE // 2
        recorded = heard.audio()
        spectrum = np.abs(np.fft.rfft(recorded))
        assert np.argmax(spectrum) * RATE / len(recorded) == pytest.approx(440, abs=5)

        buffer.enqueue(tone(30.0))
        wait_until(lambda: rms(heard.audio()[-1600:]) > 0.2, "the long tone is heard")
        buffer.stop()
        wait_until(lambda: rms(heard.audio()[-RATE // 2 :]) < 1e-3, "the mic hears silence after stop")

        mic.check()
        speaker.check()

    assert buffer.queued_frames == 0
    assert buffer.audio_played_to < RATE + 10 * RATE  # most of the 30 s tone was discarded, never played
    blocks = heard.blocks
    assert blocks[0].start == 0
    assert all(a.end == b.start for a, b in itertools.pairwise(blocks))
    sent = played.blocks
    last_sound = max(i for i, b in enumerate(sent) if b.samples.any())
    assert not sent[last_sound].samples[80:].any()  # the stop fade fits in the start of one block
    assert not any(b.samples.any() for b in sent[last_sound + 1 :])
    # every block handed out is reported, in clock order; a gap is silence the device played while its
    # stream restarted after an underflow (a loaded machine), which no block carried
    assert all(a.end <= b.start for a, b in itertools.pairwise(sent))
    assert sent[-1].end == buffer.position


def steady(speaker: SpeakerStream) -> Callable[[], bool]:
    """A condition: no new underflow of ``speaker`` for half a second."""
    seen = [speaker.underflows, time.monotonic()]

    def check() -> bool:
        if speaker.underflows != seen[0]:
            seen[:] = [speaker.underflows, time.monotonic()]
        return time.monotonic() - seen[1] >= 0.5

    return check


@pytest.mark.device
def test_a_pause_silences_the_audio_the_sound_server_still_holds_and_counts_only_what_reached_it(
    pulse_device: str,
) -> None:
    heard = Recorder()
    buffer = PlaybackBuffer()
    reply = (np.random.default_rng(7).standard_normal(4 * RATE) * 0.1).astype(np.float32)

    with (
        MicrophoneStream(heard, device=pulse_device, block_frames=640) as mic,
        SpeakerStream(buffer, device=pulse_device, block_frames=640, muter=SinkInputControl()) as speaker,
    ):
        wait_until(lambda: len(heard.audio()) >= RATE // 5, "the mic delivers audio")
        # a stream opened right after another may underrun again and again for seconds (PortAudio's
        # ALSA pulse plugin, with or without muting): the reply starts once the speaker is steady
        wait_until(steady(speaker), "the speaker plays without underflows for half a second")
        buffer.enqueue(reply, turn=1)
        wait_until(lambda: rms(heard.audio()[-RATE // 2 :]) > 0.05, "the reply is heard for half a second")
        cut_at = len(heard.audio())  # the mic's clock when the pause comes
        counted_before = buffer.audio_played_at(speaker.position - speaker.latency_samples)
        buffer.pause()
        silenced_from = speaker.silence_unplayed()
        assert silenced_from is not None, "nothing was silenced in the sound server"

        def unmuted() -> bool:
            speaker.unmute_when_played()
            return not buffer.is_held

        wait_until(unmuted, "the silenced audio has played through and the stream is unmuted")
        time.sleep(0.3)
        counted = buffer.audio_played_to
        resumed_at = len(heard.audio())
        buffer.resume()
        wait_until(lambda: len(heard.audio()) > resumed_at + RATE // 2, "the mic hears on")
        mic.check()
        speaker.check()

    audio = heard.audio()
    loud = np.flatnonzero(np.abs(audio[:resumed_at]) > 1e-3)
    first, end = int(loud[0]), int(loud[-1]) + 1
    reached = end - first  # the reply's samples that reached the sink before the pause took hold
    # the old code let the ~120 ms PulseAudio had queued play out after the pause
    assert (end - cut_at) * 1000 / RATE < 100
    assert counted_before <= reached
    assert reached - 50 * RATE // 1000 <= counted <= reached  # at or just under what reached the sink
    again = np.flatnonzero(np.abs(audio[resumed_at:]) > 1e-3)
    continued = audio[resumed_at + int(again[0]) + 200 : resumed_at + int(again[0]) + 1200]
    lags = np.correlate(reply[: counted + 2000].astype(np.float64), continued.astype(np.float64), "valid")
    # a resume plays on from what was counted (its fade-in hides the first few samples' onset)
    assert abs(int(np.argmax(np.abs(lags))) - 200 - counted) <= 8


@pytest.mark.device
def test_a_speaker_that_rested_while_idle_plays_a_reply_whole_and_counts_what_reached_the_sink(
    pulse_device: str,
) -> None:
    heard, played = Recorder(), Recorder()
    buffer = PlaybackBuffer()
    reply = (np.random.default_rng(3).standard_normal(RATE) * 0.1).astype(np.float32)

    def epoch(blocks: list[AudioBlock]) -> float:
        """The speaker's stream time of clock sample 0, by its steady blocks' stamps."""
        return float(np.median([b.device_time - b.start / RATE for b in blocks[-20:] if b.device_time]))

    with (
        MicrophoneStream(heard, device=pulse_device, block_frames=640),
        SpeakerStream(
            buffer, device=pulse_device, block_frames=640, on_played=played, rest_after_s=0.5
        ) as speaker,
    ):
        wait_until(lambda: len(heard.audio()) >= RATE // 5, "the mic delivers audio")
        wait_until(steady(speaker), "the speaker plays without underflows for half a second")
        wait_until(lambda: len(played.blocks) >= 20, "the speaker plays steadily")
        before = epoch(played.blocks)
        while not speaker.resting:  # told after every mic block, as the driver does
            speaker.rest_when_idle(True)
            time.sleep(0.04)
        rested_at, sent = buffer.position, len(played.blocks)
        time.sleep(1.0)
        assert (buffer.position, len(played.blocks)) == (rested_at, sent)  # no callbacks while resting
        speaker.check()  # a stream stopped to rest is no failure

        underflows = speaker.underflows
        speaker.rest_when_idle(False)
        buffer.enqueue(reply, turn=1)
        wait_until(lambda: buffer.queued_frames == 0, "the reply was handed to the device")
        wait_until(lambda: rms(heard.audio()[-RATE // 2 :]) < 1e-3, "the reply has played out")
        speaker.check()
        after = epoch(played.blocks)
        assert speaker.underflows == underflows  # starting up is not a glitch of what played

    # the clock moved on as if silence had played: the stamps keep their place against the mic's
    assert abs(after - before) < 0.02
    assert buffer.position - rested_at > 1.0 * RATE
    audio = heard.audio()
    loud = np.flatnonzero(np.abs(audio) > 1e-3)
    reached = audio[loud[0] : loud[-1] + 1]
    # nothing lost while the stream started (a lost block is 640 samples; the resamplers smear the edges)
    assert abs(len(reached) - len(reply)) < 40
    assert buffer.audio_played_to == len(reply)
    first_sound = next(b for b in played.blocks if b.samples.any())
    assert first_sound.start > rested_at + RATE  # the reply went out after the rest, on the moved clock


@pytest.mark.device
def test_devices_command_lists_the_pulse_device(
    pulse_device: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert any(d.name == pulse_device and d.input_channels and d.output_channels for d in list_devices())

    parser = argparse.ArgumentParser()
    devices.register(parser.add_subparsers())
    args = parser.parse_args(["devices"])
    assert args.run(args) == 0

    assert pulse_device in capsys.readouterr().out


def test_an_unknown_device_name_is_a_one_line_device_error() -> None:
    with pytest.raises(DeviceError) as caught:
        MicrophoneStream(lambda block: None, device="no-such-microphone")
    assert "no-such-microphone" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unknown_device_number_is_a_one_line_device_error() -> None:
    with pytest.raises(DeviceError) as caught:
        SpeakerStream(PlaybackBuffer(), device=999)
    assert "#999" in str(caught.value)
    assert "\n" not in str(caught.value)
