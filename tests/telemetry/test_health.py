"""The health checks: the heartbeat, the error events clients were told of, and the servers' answers."""

from __future__ import annotations

import socket
import time

import httpx

from tests.support.fault_llm import Exchange, FaultServer
from voice.client_events import Failure, InputTranscript, OutputAudioStarted
from voice.telemetry.health import Health
from voice.telemetry.heartbeat import Heartbeat
from voice.telemetry.http_endpoint import TelemetryEndpoint
from voice.telemetry.metrics import VoiceMetrics
from voice.telemetry.probes import Probe, llm_probe, server_probe


def beating() -> Heartbeat:
    heartbeat = Heartbeat()
    heartbeat.beat()
    return heartbeat


def test_a_stale_heartbeat_fails_audio_with_the_last_audio_error_as_the_reason() -> None:
    heartbeat = Heartbeat()
    health = Health(heartbeat)
    assert health.report().checks["audio"].startswith("starting")
    heartbeat.beat()
    assert health.report().ok
    heartbeat.last = time.monotonic() - 10  # no block handled for ten seconds
    assert health.report().checks["audio"].startswith("no mic block handled for 10.")
    health.see(Failure("audio", "the microphone delivered nothing for 1 s; reopening the audio devices"))
    report = health.report()
    assert report.status_code == 503
    assert report.reason() == "audio: the microphone delivered nothing for 1 s; reopening the audio devices"
    heartbeat.beat()  # the devices are back
    assert health.report().ok


def test_speech_failures_hold_until_that_part_works_again() -> None:
    health = Health(beating())
    health.see(Failure("asr", "RuntimeError: whisper died"))
    health.see(Failure("tts", "piper died"))
    health.see(Failure("rate_limited", "a client's own error is not the assistant's health"))
    assert health.report().checks == {
        "audio": "ok",
        "llm": "ok",
        "asr": "RuntimeError: whisper died",
        "tts": "piper died",
    }
    health.see(InputTranscript("text-1", "typed", None, 1.0))  # typed input says nothing of ASR
    health.see(InputTranscript("speech-2", "spoken", None, 2.0))
    health.see(OutputAudioStarted(3, 2.5))
    assert health.report().ok


def test_the_llm_probe_asks_models_and_reports_what_it_got() -> None:
    def models(exchange: Exchange) -> None:
        assert exchange.request.path == "/v1/models"
        assert exchange.request.headers["authorization"] == "Bearer k"
        exchange.respond(200, {"data": []})

    with FaultServer(models) as server:
        assert llm_probe(lambda: server.url, {"Authorization": "Bearer k"}).answer() == "ok"
    with FaultServer(lambda exchange: exchange.respond(500, {})) as server:
        assert llm_probe(lambda: server.url).answer() == f"{server.url}/models answered 500"
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    assert (
        llm_probe(lambda: f"http://127.0.0.1:{port}/v1").answer().endswith("does not answer (ConnectError)")
    )
    assert "does not accept connections" in server_probe(f"wyoming://127.0.0.1:{port}").answer()


def test_a_probe_asks_at_most_every_few_seconds() -> None:
    asked: list[int] = []

    def ask() -> str:
        asked.append(1)
        return "ok"

    probe = Probe(ask)
    for _ in range(20):
        assert probe.answer() == "ok"
    assert len(asked) == 1


def test_chat_serves_metrics_and_health_on_loopback() -> None:
    health = Health(
        beating(), llm=Probe(lambda: "http://127.0.0.1:9/v1/models does not answer (ConnectError)")
    )
    with TelemetryEndpoint(0, VoiceMetrics(), health) as endpoint:
        base = f"http://127.0.0.1:{endpoint.port}"
        assert "voice_turns_total" in httpx.get(f"{base}/metrics").text
        answer = httpx.get(f"{base}/healthz")
        assert answer.status_code == 503
        assert answer.json()["checks"]["llm"].startswith("http://127.0.0.1:9/v1/models")
        assert httpx.get(f"{base}/").status_code == 404
