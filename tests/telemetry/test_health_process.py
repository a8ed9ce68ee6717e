"""/healthz of a real kiosk: 503 with the reason while its llama.cpp server is down, 200 once it is back;
`voice status` prints the same; /metrics and /healthz keep /ws's token rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.kiosk import UNREACHABLE_LLM, Kiosk, running_kiosk
from tests.support.llama_server import ALIAS, LlamaServer

pytestmark = [pytest.mark.slow, pytest.mark.processes]
TOKEN = "s3cret-token"


def health(kiosk: Kiosk) -> tuple[int, dict[str, object]]:
    response = httpx.get(f"http://127.0.0.1:{kiosk.port}/healthz", timeout=10)
    return response.status_code, response.json()


def health_becomes(kiosk: Kiosk, status: int, seconds: float = 30) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while True:
        code, body = health(kiosk)
        if code == status or time.monotonic() > deadline:
            assert code == status, body
            return body
        time.sleep(0.5)


def status_command(port: int) -> subprocess.CompletedProcess[str]:
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    command = [sys.executable, "-m", "voice", "status", "--port", str(port)]
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=60)


@pytest.mark.models
def test_healthz_fails_while_the_llm_server_is_down_and_recovers_when_it_is_back(tmp_path: Path) -> None:
    with LlamaServer() as llm:
        args = ["--audio", "none", "--llm-url", llm.url, "--llm-model", ALIAS]
        with running_kiosk(tmp_path, *args) as kiosk:
            assert health_becomes(kiosk, 200)["checks"] == {
                "audio": "ok",
                "llm": "ok",
                "asr": "ok",
                "tts": "ok",
            }
            shown = status_command(kiosk.port)
            assert (shown.returncode, shown.stdout.splitlines()[0]) == (
                0,
                f"http://127.0.0.1:{kiosk.port}/healthz: ok",
            )

            llm.kill()
            body = health_becomes(kiosk, 503)
            assert body["status"] == "failing"
            assert str(body["reason"]).startswith(f"llm: {llm.url}/models does not answer")
            shown = status_command(kiosk.port)
            assert shown.returncode == 1
            assert "  llm: " in shown.stdout
            assert "  audio: ok" in shown.stdout

            llm.start()  # where the kiosk expects it
            assert health_becomes(kiosk, 200)["status"] == "ok"


def test_metrics_and_health_beyond_loopback_need_the_token(tmp_path: Path) -> None:
    with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM, env={"VOICE_TOKEN": TOKEN}) as kiosk:
        base = f"http://127.0.0.1:{kiosk.port}"
        for path in ("/metrics", "/healthz"):
            assert httpx.get(base + path, timeout=10).status_code == 401
            assert (
                httpx.get(base + path, headers={"Authorization": "Bearer wrong"}, timeout=10).status_code
                == 401
            )
        scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert scraped.status_code == 200
        assert scraped.headers["Content-Type"].startswith("text/plain; version=")
        names = {family.name for family in text_string_to_metric_families(scraped.text)}
        assert {"voice_turns", "voice_voice_to_voice_seconds", "process_resident_memory_bytes"} <= names
        by_query = httpx.get(f"{base}/healthz?token={TOKEN}", timeout=10)
        assert by_query.status_code == 503  # the LLM at port 9 never answers
        assert json.loads(by_query.text)["checks"]["llm"].startswith(
            "http://127.0.0.1:9/v1/models does not answer"
        )
        assert TOKEN not in scraped.text + by_query.text
