"""Runs llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``) as a child that dies with us.

``python -m voice.llm.server_child PARENT_PID SERVER_ARGS...``: asks Linux to kill this process when
the thread that started it ends (PR_SET_PDEATHSIG), so a crashed or killed ``voice`` never leaves a
server behind, then becomes the server. Elsewhere only the parent's orderly shutdown stops it.
"""

from __future__ import annotations

import os
import runpy
import sys

from voice.dying_child import die_with_parent


def main(argv: list[str]) -> None:
    parent_pid, *server_args = argv
    if sys.platform == "linux":
        die_with_parent()
    if os.getppid() != int(parent_pid):
        sys.exit("voice exited before its LLM server started")  # too late for the death signal
    sys.argv = ["llama_cpp.server", *server_args]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
