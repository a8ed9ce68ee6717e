"""Real sound devices through PortAudio, against a private PulseAudio null sink the tests start themselves."""

from __future__ import annotations

import argparse
import itertools
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from voice.audio import commands
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import MicrophoneStream, SpeakerStream, list_devices
from voice.audio.playback import PlaybackBuffer
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
    assert sum(b.frames for b in sent) == buffer.handed_out


@pytest.mark.device
def test_devices_command_lists_the_pulse_device(
    pulse_device: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert any(d.name == pulse_device and d.input_channels and d.output_channels for d in list_devices())

    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
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
