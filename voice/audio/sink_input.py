"""Muting this process's own playback stream in PulseAudio, over one persistent pulsectl connection.

PortAudio reaches PulseAudio through ALSA's pulse plugin, whose stream keeps three blocks (about 120 ms
at 40 ms blocks) queued in the server. Neither PortAudio nor ALSA can drop them without restarting the
stream, and a restarted stream may underrun in bursts, or stall for up to 2 s on a null sink no client
reads at low latency, before PulseAudio plays it steadily (voice/audio/devices.py waits for that). Muting its
sink input silences it at once (the server rewinds what it has mixed already), and unmuting it once
the queued audio has played through lets the next audio be heard.

Without pulsectl, without a PulseAudio server (plain ALSA, other hosts) or without a stream of ours in
it, nothing is muted and the queued audio plays out, as it always did.
"""

from __future__ import annotations

import os
import sys
from typing import Any


class SinkInputControl:
    """Mutes and unmutes the sink inputs (playback streams) this process has in the PulseAudio server
    that ``PULSE_SERVER`` (or the usual default) names. Connects when made, so that a cut does not
    wait for it; after a failure it stays unavailable (a new control, made when the devices are
    reopened, tries again)."""

    def __init__(self, pid: int | None = None) -> None:
        self._pid = str(os.getpid() if pid is None else pid)
        self._pulse: Any = None
        self._unavailable = False
        self._muted: list[int] = []  # the sink inputs muted, to unmute the same ones
        self._connection()

    def mute(self, muted: bool) -> bool:
        """Mute (or unmute) our playback streams; False when there is nothing we can mute."""
        pulse = self._connection()
        if pulse is None:
            return False
        import pulsectl

        try:
            if muted:
                self._muted = [
                    sink_input.index
                    for sink_input in pulse.sink_input_list()
                    if sink_input.proplist.get("application.process.id") == self._pid
                ]
            for index in self._muted:
                pulse.sink_input_mute(index, muted)
        except pulsectl.PulseError:  # the stream or the server went away: it will not play on anyway
            self._drop_connection()
            return False
        if not muted:
            self._muted = []
        return bool(self._muted) or not muted

    def close(self) -> None:
        self._drop_connection()
        self._unavailable = True

    def _connection(self) -> Any:
        if self._pulse is not None or self._unavailable:
            return self._pulse
        try:
            import pulsectl
        except (ImportError, OSError):  # not installed, or no libpulse to load
            self._unavailable = True
            return None
        pulse = pulsectl.Pulse("voice", connect=False)
        try:
            # never start a server of our own; no timeout: pulsectl's waits it out even once connected
            pulse.connect(autospawn=False)
        except pulsectl.PulseError:
            pulse.close()
            self._unavailable = True
            return None
        self._pulse = pulse
        return pulse

    def _drop_connection(self) -> None:
        if self._pulse is not None:
            self._pulse.close()
            self._pulse = None


def sink_input_control() -> SinkInputControl | None:
    """A control of our streams in PulseAudio where there may be one (Linux), else None."""
    return SinkInputControl() if sys.platform.startswith("linux") else None
