"""A real llama.cpp OpenAI-compatible server (llama-cpp-python) with the bundled SmolLM2, on loopback.

Started as its own process on a fixed port, so a test can kill it (as a crash would) and start it again
where the assistant expects it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from voice.llm.embedded_server import bundled_gguf
from voice.testing.loopback import free_port

ALIAS = "smollm2"
STARTUP_S = 120.0


class LlamaServer:
    """``start()`` waits until it answers ``GET /v1/models``; ``kill()`` ends it at once."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_gguf()), "--model_alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "2048", "--verbose", "False",
        ]  # fmt: skip
        # llama_cpp.server reads generic variables (PORT, MODEL, ...): give it only what Python needs
        env = {name: os.environ[name] for name in ("PATH", "HOME", "PYTHONPATH") if name in os.environ}
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise AssertionError(f"llama.cpp server exited ({self._process.returncode})")
            try:
                if httpx.get(f"{self.url}/models", timeout=1, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise AssertionError("llama.cpp server did not answer")

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()
