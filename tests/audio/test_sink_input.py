"""Muting our own PulseAudio stream (voice/audio/sink_input.py) where there is no PulseAudio."""

from __future__ import annotations

import importlib.abc
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


class NoLibpulse(importlib.abc.MetaPathFinder):
    """Fails the import of pulsectl as it fails where libpulse is not installed."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "pulsectl" or name.startswith("pulsectl."):
            raise OSError("libpulse.so.0: cannot open shared object file: No such file or directory")


def test_without_libpulse_nothing_is_muted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pulsectl", raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoLibpulse(), *sys.meta_path])

    control = SinkInputControl()

    assert not control.mute(True)
    control.close()
