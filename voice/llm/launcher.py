"""Start child processes from one long-lived thread, so their parent-death signal means "voice ended".

Linux sends PR_SET_PDEATHSIG when the *thread* that forked the child ends, not the process. The embedded
server is restarted from whatever thread makes the next request (a worker that may end any time), so
every start goes through this launcher's thread, which lives until ``close()``.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future

from voice.errors import ModelError

Start = Callable[[], subprocess.Popen[bytes]]


class Launcher:
    def __init__(self) -> None:
        self._starts: queue.SimpleQueue[tuple[Start, Future[subprocess.Popen[bytes]]] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="llm-server-launcher", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (job := self._starts.get()) is not None:
            start, started = job
            try:
                started.set_result(start())
            except Exception as exc:  # handed to the thread that asked, which raises it
                started.set_exception(exc)

    def launch(self, start: Start) -> subprocess.Popen[bytes]:
        """Run ``start`` (which calls ``subprocess.Popen``) on the launcher thread; returns its process."""
        started: Future[subprocess.Popen[bytes]] = Future()
        with self._lock:
            if self._closed:  # a restart racing the shutdown: nothing would ever serve it
                raise ModelError("the embedded LLM server is shutting down")
            self._starts.put((start, started))
        try:
            return started.result()
        except BaseException:
            # Interrupted while waiting (Ctrl-C): a child started after all must not outlive the wait.
            started.add_done_callback(_kill_unclaimed)
            raise

    def close(self) -> None:
        """End the thread once the children it started are gone (their death signal fires with it)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._starts.put(None)  # after every start already asked for
        self._thread.join(timeout=5.0)


def _kill_unclaimed(started: Future[subprocess.Popen[bytes]]) -> None:
    if started.exception() is None:
        process = started.result()
        process.kill()
        process.wait()
