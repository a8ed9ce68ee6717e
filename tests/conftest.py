"""Fixtures shared across test folders: a private PulseAudio server for real-device tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from voice.audio.devices import rescan_devices
from voice.audio.pulse import private_pulse
from voice.errors import DeviceError


@pytest.fixture(scope="session")
def pulse_device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start a private PulseAudio with one null sink; yields the PortAudio device name reaching it.

    PortAudio reaches PulseAudio through ALSA's pulse plugin; the null sink's monitor is the default
    source, so what the speaker plays comes back on the mic. Failing to start fails the test.
    """
    previous = os.environ.get("PULSE_SERVER")
    try:
        with private_pulse(tmp_path_factory.mktemp("pulse")) as server:
            os.environ["PULSE_SERVER"] = server
            rescan_devices()
            try:
                yield "pulse"
            finally:
                if previous is None:
                    del os.environ["PULSE_SERVER"]
                else:
                    os.environ["PULSE_SERVER"] = previous
                rescan_devices()
    except DeviceError as exc:
        pytest.fail(str(exc))
