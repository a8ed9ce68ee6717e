"""The embedded server's output goes to a rotated log that stays within its bounds however much it says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from voice.llm.server_output import ServerOutputLog

CHATTY = (
    "import sys\n"
    "for n in range(2000): print(f'line {n} of a chatty server')\n"
    "sys.exit('fatal: out of memory')"
)


def run_into(log: ServerOutputLog) -> int:
    process = subprocess.Popen(
        [sys.executable, "-u", "-c", CHATTY],  # unbuffered, as the embedded server's child runs
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    log.follow(process.stdout, process.pid)
    process.wait()
    return process.pid


def test_the_log_rotates_within_its_size_and_backups(tmp_path: Path) -> None:
    log = ServerOutputLog(tmp_path / "server.log", max_bytes=4_000, backups=2)
    log.note("started")
    pid = run_into(log)
    log.close()
    files = sorted(path.name for path in tmp_path.iterdir())
    assert files == ["server.log", "server.log.1", "server.log.2"]
    assert all((tmp_path / name).stat().st_size <= 4_000 for name in files)
    newest = (tmp_path / "server.log").read_text()
    assert f"[{pid}] fatal: out of memory" in newest


def test_a_restart_appends_to_the_same_log(tmp_path: Path) -> None:
    log = ServerOutputLog(tmp_path / "server.log", max_bytes=1_000_000, backups=1)
    first, second = run_into(log), run_into(log)
    log.close()
    text = (tmp_path / "server.log").read_text()
    assert f"[{first}] line 0 of a chatty server" in text
    assert f"[{second}] line 1999 of a chatty server" in text


def test_the_last_line_says_why_the_server_failed(tmp_path: Path) -> None:
    log = ServerOutputLog(tmp_path / "server.log")
    run_into(log)
    log.close()  # the reader has copied every line
    assert log.last_line() == "fatal: out of memory"
