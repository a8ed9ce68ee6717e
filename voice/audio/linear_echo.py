"""A linear echo canceller for what ASR hears: Speex's MDF adaptive filter, and no suppression after it.

AEC3 also suppresses whatever echo it could not subtract, and during double talk that suppression
eats the user's words (docs/architecture.md §3). A linear filter removes only what matches the speaker,
so the user's voice passes intact while the echo drops by 10-30 dB as the filter converges. This is
libspeexdsp's multi-delay block frequency-domain filter (Debian ``libspeexdsp1``; PulseAudio's own
echo-cancel module uses it) called through ctypes: the C API has not changed since 2008, and the
Python bindings on PyPI are unmaintained source packages that need a compiler.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

import numpy as np
import numpy.typing as npt

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.errors import AudioError, ProtocolError

FRAME_MS = 10
TAIL_MS = 250  # the echo path modelled behind the reference EchoDelay moved: up to its MOVE_MS, and the room
_SET_SAMPLING_RATE = 24  # SPEEX_ECHO_SET_SAMPLING_RATE in speex_echo.h
_LIBRARY_NAMES = ("speexdsp", "libspeexdsp.so.1")
_library: ctypes.CDLL | None = None
_library_lock = threading.Lock()


def _speexdsp() -> ctypes.CDLL:
    """libspeexdsp, loaded once, with the signatures of the four calls used here."""
    global _library
    with _library_lock:
        if _library is not None:
            return _library
        for name in _LIBRARY_NAMES:
            path = ctypes.util.find_library(name) or name
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            if hasattr(lib, "speex_echo_state_init"):
                break
        else:
            raise AudioError("libspeexdsp is not installed (Debian: apt-get install libspeexdsp1)")
        lib.speex_echo_state_init.restype = ctypes.c_void_p
        lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.speex_echo_ctl.restype = ctypes.c_int
        lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        lib.speex_echo_cancellation.restype = None
        lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p] * 4
        lib.speex_echo_state_reset.restype = None
        lib.speex_echo_state_reset.argtypes = [ctypes.c_void_p]
        lib.speex_echo_state_destroy.restype = None
        lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
        _library = lib
        return lib


def _pcm(samples: Samples) -> npt.NDArray[np.int16]:
    pcm: npt.NDArray[np.int16] = (np.clip(samples, -1.0, 1.0) * 32767.0).astype(np.int16)
    return pcm


class SpeexEchoCanceller:
    """Echo subtracted by Speex's adaptive filter from ``mic``, given the speaker's ``reference``.

    Each returned block covers the same clock span as the mic block (the filter adds no delay);
    blocks must be whole 10 ms frames, each after the previous one (a gap is audio the driver dropped).
    Not thread-safe: one per mic stream.
    """

    def __init__(self, rate: int = ENGINE_RATE, tail_ms: int = TAIL_MS) -> None:
        self.rate = rate
        self._lib = _speexdsp()
        self._frame = rate * FRAME_MS // 1000
        self._state = self._lib.speex_echo_state_init(self._frame, rate * tail_ms // 1000)
        if not self._state:
            raise AudioError("libspeexdsp could not create an echo canceller")
        value = ctypes.c_int(rate)
        self._lib.speex_echo_ctl(self._state, _SET_SAMPLING_RATE, ctypes.byref(value))
        self._next: int | None = None

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        if (mic.start, mic.frames) != (reference.start, reference.frames):
            raise ProtocolError(
                f"echo reference spans samples {reference.start}-{reference.end}, "
                f"the mic {mic.start}-{mic.end}"
            )
        if mic.rate != self.rate or mic.channels != 1 or reference.channels != 1:
            raise AudioError(f"linear echo canceller needs mono {self.rate} Hz blocks")
        if mic.frames % self._frame:
            raise AudioError(f"linear echo canceller takes whole {FRAME_MS} ms frames, got {mic.frames}")
        if self._next is not None and mic.start < self._next:  # after a gap (audio dropped) it goes on
            raise ProtocolError(f"mic block at sample {mic.start} does not follow the previous one")
        self._next = mic.end
        near, far = _pcm(mic.samples), _pcm(reference.samples)
        out = np.empty(mic.frames, dtype=np.int16)
        cancel, state = self._lib.speex_echo_cancellation, self._state
        for at in range(0, mic.frames, self._frame):
            cancel(
                state,
                near[at:].ctypes.data,
                far[at:].ctypes.data,
                out[at:].ctypes.data,
            )
        return AudioBlock(out.astype(np.float32) / 32767.0, self.rate, mic.start)

    def in_hindsight(self, mic: AudioBlock, reference: AudioBlock, passes: int) -> AudioBlock:
        """``mic`` cancelled after the filter has first learned from the same audio ``passes - 1`` times:
        Speex adapts cautiously, so a filter that has heard a second of echo cancels little of it live
        (5 dB), but three passes over that second take 13-20 dB."""
        for _ in range(passes - 1):
            self._next = None
            self.process(mic, reference)
        self._next = None
        return self.process(mic, reference)

    def skip(self, mic: AudioBlock) -> AudioBlock:
        """``mic`` as it is, for a span whose reference (and the filter's tail before it) is silent:
        with nothing to subtract, the filter's output would be the mic, and it costs nothing."""
        self._next = mic.end
        return mic

    def reset(self) -> None:
        """Forget the learned echo path (a new device or room, or a reference moved in time)."""
        self._lib.speex_echo_state_reset(self._state)

    def __del__(self) -> None:
        state, self._state = getattr(self, "_state", None), None
        if state:
            self._lib.speex_echo_state_destroy(state)
