# ruff: noqa: E402  (OpenBLAS is pinned below before anything imports numpy)
"""Fixtures shared across test folders: a private PulseAudio server, the real speech models."""

from __future__ import annotations

import os
import platform
import sys

# The scenarios' expected transcripts and timings (tests/sim/expected) were measured with one set of
# OpenBLAS kernels, which it picks by CPU: pin one every x86-64 machine with AVX2 runs, before numpy loads.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
# Whisper's int8 words differ by CPU (AVX2 alone hears "winner" where VNNI hears "weather"): every x86
# machine runs the narrow path an AVX2-only AMD one takes by default (oneDNN, not MKL, capped at AVX2), so
# a wide CPU checks what a narrow one hears (docs/architecture.md §3).
if platform.machine() in ("x86_64", "AMD64"):
    os.environ.setdefault("CT2_USE_MKL", "0")
    os.environ.setdefault("CT2_FORCE_CPU_ISA", "AVX2")
    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
assert "numpy" not in sys.modules, "numpy was loaded before tests/conftest.py could pin OpenBLAS's kernels"

from collections.abc import Iterator

import pytest

from tests.support.slow_reasons import COLLECTED, REASONS
from voice.asr.whisper import WhisperTranscriber
from voice.audio.devices import rescan_devices
from voice.audio.pulse import private_pulse
from voice.errors import DeviceError
from voice.tts.piper_voice import PiperSynthesizer


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test with a reason to be slow (a real model, device or browser, other processes, the wall clock) is
    slow: `-m "not slow"` leaves it out. Every test is noted first, for tests/test_slow_reasons.py."""
    config.stash[COLLECTED] = [(item.nodeid, {mark.name for mark in item.iter_markers()}) for item in items]
    for item in items:
        if any(item.get_closest_marker(name) for name in REASONS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user's own ~/.config/voice/config.toml must not reach the tests or the commands they start."""
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))
    yield
    if previous is None:
        del os.environ["XDG_CONFIG_HOME"]
    else:
        os.environ["XDG_CONFIG_HOME"] = previous


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


@pytest.fixture(scope="session")
def transcriber() -> WhisperTranscriber:
    """The bundled whisper tiny.en with default settings."""
    return WhisperTranscriber()


@pytest.fixture(scope="session")
def synthesizer() -> PiperSynthesizer:
    """The bundled piper en_US-joe-medium with default settings (phoneme alignments, zero noise)."""
    return PiperSynthesizer()
