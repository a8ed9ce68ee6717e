"""Muting our own PulseAudio stream (voice/audio/sink_input.py) where there is no PulseAudio."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from voice.audio.sink_input import SinkInputControl


def test_without_a_sound_server_nothing_is_muted_and_none_is_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PULSE_SERVER", f"unix:{tmp_path / 'no-such-socket'}")
    began = time.monotonic()

    control = SinkInputControl()

    assert not control.mute(True)
    assert not control.mute(True)  # asked again, it does not wait for a server again either
    assert time.monotonic() - began < 1.0
    control.close()


def test_without_pulsectl_nothing_is_muted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pulsectl", None)  # import pulsectl raises ImportError

    control = SinkInputControl()

    assert not control.mute(True)
    control.close()
