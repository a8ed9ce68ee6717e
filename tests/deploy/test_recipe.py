"""The many-kiosks recipe, started from its own unit files: the model box's three servers and one kiosk.

Each unit's ExecStart runs as a process on loopback with the box's paths, ports and address swapped for
the test's (the files themselves are read, so a wrong flag, path or port in them fails here). The kiosk
then answers a typed question with the box's LLM, whisper and piper.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.support.kiosk import Event, Kiosk, events_until, next_event, of_type, send
from voice.testing.deploy_units import DEPLOY, UnitCommand, unit_command
from voice.testing.loopback import free_port, wait_for_port

pytestmark = [pytest.mark.slow, pytest.mark.models]

BOX_UNITS = ("voice-box-asr.service", "voice-box-tts.service", "voice-box-llm.service")


def test_a_kiosk_unit_pointed_at_the_box_units_answers_a_typed_question(tmp_path: Path) -> None:
    box, kiosk_home = tmp_path / "box", tmp_path / "kiosk"
    link = ["sh", str(DEPLOY / "link-models.sh"), str(box / "models"), sys.executable]
    subprocess.run(link, check=True, capture_output=True)
    ports = {"10300": free_port(), "10200": free_port(), "8080": free_port()}
    replacements = {
        "/opt/voice/.venv": sys.prefix,
        "/var/lib/voice-box": str(box),
        "/var/lib/voice": str(kiosk_home),
        "0.0.0.0": "127.0.0.1",
        **{old: str(new) for old, new in ports.items()},
    }
    kiosk_port = str(free_port())
    with ExitStack() as stack:
        for name, port in zip(BOX_UNITS, ports.values(), strict=True):
            stack.enter_context(serving(unit_command(name, replacements), port, tmp_path / f"{name}.log"))
        command = unit_command(
            "voice-kiosk@.service", replacements, {"MODEL_BOX": "127.0.0.1"}, instance=kiosk_port
        )
        kiosk = stack.enter_context(started_kiosk(command, tmp_path))
        events = asyncio.run(ask(kiosk, "What is the capital of France? Answer in one sentence."))
    kinds = [event["type"] for event in events]
    assert "error" not in kinds, [event for event in events if event["type"] == "error"]
    done, heard = events[-1], [event for event in events if event["type"] == "response.heard"]
    assert done["text"].strip()
    assert done["text"] == heard[-1]["text"]  # every word was heard, paced by the box's voice
    assert kiosk.port == int(kiosk_port)  # the instance name is the kiosk's port
    logs = list((kiosk_home / f"kiosk-{kiosk_port}" / "voice" / "kiosk").glob("kiosk-*.jsonl"))
    assert len(logs) == 1  # in the instance's own state folder
    assert done["text"].split()[0] in logs[0].read_text(encoding="utf-8")


async def ask(kiosk: Kiosk, question: str) -> list[Event]:
    async with connect(kiosk.url) as ws:
        await next_event(ws)
        await send(ws, type="input.text", id="q", text=question)
        return await events_until(ws, of_type("response.done"), 300)


def unit_environment(command: UnitCommand, home: Path) -> dict[str, str]:
    """The process environment a unit gives, over this test's (no user config, no VOICE_ settings)."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    return {**inherited, "XDG_CONFIG_HOME": str(home / "config"), **command.environment}


@contextmanager
def serving(command: UnitCommand, port: int, log: Path) -> Iterator[None]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            command.argv, stdout=out, stderr=subprocess.STDOUT, env=unit_environment(command, log.parent)
        )
    try:
        wait_for_port(port, process, log)
        yield
    finally:
        process.kill()
        process.wait()


@contextmanager
def started_kiosk(command: UnitCommand, home: Path) -> Iterator[Kiosk]:
    process = subprocess.Popen(
        command.argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=unit_environment(command, home),
    )
    kiosk = Kiosk(process, home / "unused")
    try:
        yield kiosk
    finally:
        assert kiosk.stop() == 0, kiosk.output()
