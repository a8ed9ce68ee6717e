"""glibc's malloc set up for a process that runs for weeks with model threads handing buffers around.

glibc gives each thread that allocates its own arena (up to 8 per core), and after a large block
allocated with mmap is freed it raises the size it mmaps from (up to 32 MB), so from then on whisper's
windows, piper's tensors (its onnxruntime arena is off) and the audio handed between threads come from
the arenas and stay there once freed: on the PulseAudio soak, memory free but kept by malloc went from
94 to about 290 MB in 23 minutes while what was in use grew 20 MB. A fixed mmap threshold returns every
large block to the system when it is freed, and one arena per core bounds what small blocks can strand.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3  # mallopt parameters, from glibc's malloc.h
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept fixed instead of raised
ARENAS = 2  # one per core of the machines voice is measured on; a larger machine loses nothing by it


def keep_malloc_flat() -> bool:
    """Set glibc malloc's mmap threshold and arena count; False where the C library is not glibc.

    Call before the worker threads start: an arena, once a thread has one, is kept."""
    path = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(path)
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None or not hasattr(libc, "gnu_get_libc_version"):
        return False  # musl and others size their heaps differently
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_ARENA_MAX, ARENAS))
