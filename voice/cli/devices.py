"""`voice devices`: the sound devices PortAudio can open."""

from __future__ import annotations

import argparse
from typing import Any

from voice.audio.devices import DeviceInfo, list_devices
from voice.errors import DeviceError


def register(subparsers: Any) -> None:
    devices = subparsers.add_parser("devices", help="list the sound devices the assistant can use")
    devices.set_defaults(run=_devices)


def describe(device: DeviceInfo) -> str:
    """One line per device: index (what --device takes), name, host API, channels, defaults."""
    defaults = [
        f"default {kind}"
        for kind, flag in (("input", device.default_input), ("output", device.default_output))
        if flag
    ]
    marks = f"  [{', '.join(defaults)}]" if defaults else ""
    return (
        f"{device.index:3d}  {device.name}  ({device.host_api}, {device.input_channels} in, "
        f"{device.output_channels} out, {device.default_rate:g} Hz){marks}"
    )


def _devices(args: argparse.Namespace) -> int:
    found = list_devices()
    if not found:
        raise DeviceError(
            "no audio devices found (PortAudio sees none: no sound card, PulseAudio or PipeWire?)"
        )
    for device in found:
        print(describe(device))
    return 0
