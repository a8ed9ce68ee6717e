"""Runs a command as a child that dies with us: ``python -m voice.dying_child PARENT_PID SIGNAL COMMAND...``.

Asks Linux to send SIGNAL to this process when the thread that started it ends (PR_SET_PDEATHSIG,
which survives exec), checks the parent is still there, then becomes COMMAND. So a SIGTERM or SIGKILL
that ends us without running our cleanup (a private PulseAudio's, the LLM server's) leaves nothing behind.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Have Linux send ``signum`` to this process when the thread that forked it ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")


def dying_command(command: list[str], signum: int = signal.SIGTERM) -> list[str]:
    """``command`` wrapped so that it gets ``signum`` once the thread that starts it ends (Linux only)."""
    if sys.platform != "linux":
        return command
    return [sys.executable, "-m", "voice.dying_child", str(os.getpid()), str(int(signum)), *command]


def main(argv: list[str]) -> None:
    parent_pid, signum, *command = argv
    die_with_parent(int(signum))
    if os.getppid() != int(parent_pid):
        sys.exit(f"the process that started {command[0]} exited before it did")  # too late for the signal
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
