"""Memory freed by worker threads goes back to the system instead of staying in malloc's arenas."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from voice.allocator import keep_malloc_flat

# Threads free large buffers of mixed sizes, as whisper, piper and the audio path do, then report
# what glibc malloc keeps free in its heaps (mallinfo2's fordblks) in MB.
CHURN = """
import ctypes, json, sys, threading
import numpy as np
from voice.allocator import keep_malloc_flat
if sys.argv[1] == "flat":
    assert keep_malloc_flat()
FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
def work(seed):
    rng = np.random.default_rng(seed)
    kept, records = [], []
    for _ in range(100):  # enough for glibc left alone to keep tens of MB; more only takes longer
        kept.append(np.ones(int(rng.integers(200_000, 4_000_000)) // 8))
        records.append(np.ones(64))  # a small record that outlives the buffer, as a turn's words do
        if len(kept) > 6:
            kept.pop(int(rng.integers(0, len(kept))))
    kept.clear()
    RECORDS.append(records)
RECORDS = []
threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(libc.mallinfo2().fordblks / 2**20))
"""


def free_kept_mb(mode: str) -> float:
    done = subprocess.run([sys.executable, "-c", CHURN, mode], capture_output=True, text=True, check=True)
    kept: float = json.loads(done.stdout)
    return kept


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_large_buffers_freed_by_threads_are_not_kept_in_mallocs_heaps() -> None:
    assert keep_malloc_flat()
    assert free_kept_mb("system") > 10  # glibc left alone keeps what its threads freed
    assert free_kept_mb("flat") < 5
