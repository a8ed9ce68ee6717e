"""Weeks without anyone watching: the model server dies, the sound server restarts, visitors come and go."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.support.kiosk import (
    UNREACHABLE_LLM,
    Event,
    Kiosk,
    events_until,
    next_event,
    of_type,
    running_kiosk,
    send,
)
from tests.support.processes import servers_started_by, wait_until_gone
from voice.audio.pulse import private_pulse

AUDIO = Path(__file__).resolve().parents[2] / "audio"

pytestmark = [pytest.mark.slow, pytest.mark.processes]  # each test starts a kiosk process


@pytest.mark.models
def test_a_model_server_killed_mid_reply_fails_that_turn_and_the_next_one_works(llm_kiosk: Kiosk) -> None:
    async def run() -> tuple[list[Event], list[Event]]:
        async with connect(llm_kiosk.url) as ws:
            await next_event(ws)
            await send(ws, type="input.text", id="q-killed", text="Tell me a long story about a dog.")
            failed = await events_until(ws, of_type("response.created"))
            [server] = servers_started_by(llm_kiosk.process.pid)
            os.kill(server, signal.SIGKILL)
            assert wait_until_gone(server)
            failed += await events_until(ws, of_type("error"))
            await send(ws, type="response.cancel")  # whatever the retry does, this turn is over
            await send(ws, type="input.text", id="q-after-kill", text="Say hello.")
            answered = await events_until(ws, lambda e: e.get("id") == "q-after-kill")
            answered += await events_until(ws, of_type("response.heard"))
            return failed, answered

    failed, answered = asyncio.run(run())
    error = failed[-1]
    assert error["code"] in {"transport", "protocol", "unavailable"}
    assert error["dispatch"] in {"accepted", "unknown", "not_sent"}
    assert answered[-1]["text"]  # the restarted server answered the next turn
    assert len(servers_started_by(llm_kiosk.process.pid)) == 1


def test_a_quiet_kiosk_gives_the_next_visitor_a_fresh_conversation(tmp_path: Path) -> None:
    with running_kiosk(tmp_path, "--audio", "none", "--fresh-after", "2", *UNREACHABLE_LLM) as kiosk:

        async def run() -> tuple[Event, Event]:
            async with connect(kiosk.url) as ws:
                first = await next_event(ws)
                await send(ws, type="input.text", id="visitor-1", text="Hello?")
                fresh = (await events_until(ws, of_type("session.created"), 120))[-1]
                return first, fresh

        first, fresh = asyncio.run(run())
    assert fresh["session"] != first["session"]
    assert fresh["history"] == []
    logs = sorted(kiosk.sessions.glob("kiosk-*.jsonl"))
    assert [log.stem for log in logs] == [first["session"], fresh["session"]]
    assert "visitor-1" in logs[0].read_text()


def test_old_session_logs_are_pruned(tmp_path: Path) -> None:
    with running_kiosk(tmp_path, "--audio", "none", "--keep-sessions", "3", *UNREACHABLE_LLM) as kiosk:

        async def run() -> list[str]:
            sessions = []
            async with connect(kiosk.url) as ws:
                sessions.append((await next_event(ws))["session"])
                for _ in range(5):
                    await send(ws, type="session.reset")
                    sessions.append((await events_until(ws, of_type("session.created")))[-1]["session"])
            return sessions

        sessions = asyncio.run(run())
    assert [log.stem for log in sorted(kiosk.sessions.glob("kiosk-*.jsonl"))] == sessions[-3:]


def test_with_a_wake_phrase_it_sleeps_until_spoken_to_and_again_after_the_quiet_time(tmp_path: Path) -> None:
    args = ["--audio", "none", "--wake", "hey kiosk", "--fresh-after", "2", *UNREACHABLE_LLM]
    with running_kiosk(tmp_path, *args) as kiosk:

        async def run() -> tuple[Event, list[Event]]:
            async with connect(kiosk.url) as ws:
                first = await next_event(ws)
                await send(ws, type="input.text", id="typed", text="Hello?")  # typing wakes it too
                seen = await events_until(ws, lambda e: e.get("state") == "asleep", 120)
                return first, seen

        first, seen = asyncio.run(run())
    assert first["state"] == "asleep"
    assert first["settings"]["wake"] == "hey kiosk"
    states = [event["state"] for event in seen if event["type"] == "state"]
    assert states[0] == "listening"
    assert states[-1] == "asleep"


@pytest.mark.device
@pytest.mark.models
def test_a_sound_server_that_restarts_is_an_error_event_and_the_kiosk_listens_again(tmp_path: Path) -> None:
    runtime = tmp_path / "pulse"
    args = ["--input-device", "pulse", "--output-device", "pulse", *UNREACHABLE_LLM]
    with private_pulse(runtime) as server:
        env = {"PULSE_SERVER": server}
        kiosk_context = running_kiosk(tmp_path, *args, env=env)
        kiosk = kiosk_context.__enter__()
        kiosk.wait_for_line("audio devices open; listening", 120)
    try:

        async def run() -> tuple[list[Event], list[Event]]:
            async with connect(kiosk.url) as ws:
                await next_event(ws)
                lost = await events_until(ws, lambda e: e["type"] == "error" and e["code"] == "audio", 60)
                await send(ws, type="mic.mute")  # the API stays up while the devices are gone
                lost += await events_until(ws, lambda e: e.get("state") == "muted", 30)
                await send(ws, type="mic.unmute")
                with private_pulse(runtime):  # back, at the same address
                    await asyncio.to_thread(kiosk.wait_for_line, "audio devices reopened", 120)
                    await asyncio.to_thread(
                        subprocess.run, ["paplay", str(AUDIO / "what-weather.wav")], check=True,
                        env={**os.environ, "PULSE_SERVER": server},
                    )  # fmt: skip
                    heard = await events_until(ws, of_type("input.transcript"), 120)
                return lost, heard

        lost, heard = asyncio.run(run())
    finally:
        kiosk_context.__exit__(None, None, None)
    assert lost[0]["message"].endswith("; reopening the audio devices")
    kinds = [event["type"] for event in heard]
    assert kinds.index("input.speech_started") < kinds.index("input.speech_stopped")
    assert heard[-1]["text"] == "What will the weather be like tomorrow?"
