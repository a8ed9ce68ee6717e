"""Sound devices through PortAudio (sounddevice): the mic and the speaker at ENGINE_RATE mono float32.

Each stream counts its own samples from ``start``, so every block it delivers or plays carries its
position on the sample clock. PortAudio and sounddevice errors become one-line :class:`DeviceError`s.
sounddevice is imported on first use: importing it starts PortAudio, and a missing libportaudio2
should be an error message, not a failed ``import voice``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic
from types import ModuleType, TracebackType
from typing import Any, Literal, Protocol, Self

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.errors import DeviceError

DeviceSpec = int | str | None
MAX_STAMPED_LATENCY_S = 2.0  # a latency the stamps put beyond this means they cannot be trusted
REST_AFTER_S = 3.0  # the speaker's stream stops once the conversation has been idle this long
STEADY_CALLBACKS = 5  # a started speaker plays audio once this many callbacks in a row came in time
Kind = Literal["input", "output"]


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    host_api: str
    input_channels: int
    output_channels: int
    default_rate: float
    default_input: bool
    default_output: bool


def _sounddevice() -> ModuleType:
    try:
        import sounddevice
    except OSError as exc:
        raise DeviceError("PortAudio library not found (install libportaudio2)") from exc
    module: ModuleType = sounddevice
    return module


def list_devices() -> list[DeviceInfo]:
    """Every device PortAudio sees, with the defaults marked; empty when there are none."""
    sd = _sounddevice()
    try:
        host_apis = [api["name"] for api in sd.query_hostapis()]
        devices = list(sd.query_devices())
        default_input, default_output = (int(i) for i in sd.default.device)
    except sd.PortAudioError as exc:
        raise DeviceError(f"cannot list audio devices: {exc}") from exc
    return [
        DeviceInfo(
            index=int(d["index"]),
            name=str(d["name"]),
            host_api=host_apis[d["hostapi"]],
            input_channels=int(d["max_input_channels"]),
            output_channels=int(d["max_output_channels"]),
            default_rate=float(d["default_samplerate"]),
            default_input=d["index"] == default_input,
            default_output=d["index"] == default_output,
        )
        for d in devices
    ]


def rescan_devices() -> None:
    """Restart PortAudio to see devices that appeared or vanished since it started (close streams first)."""
    sd = _sounddevice()
    try:
        # sounddevice has no public rescan; terminating and re-initialising PortAudio is its documented way.
        sd._terminate()
        sd._initialize()
    except sd.PortAudioError as exc:
        raise DeviceError(f"cannot restart PortAudio: {exc}") from exc


def _resolve(sd: ModuleType, device: DeviceSpec, kind: Kind) -> tuple[int, str]:
    """Find the device's index and name, or say in one line why there is none."""
    try:
        found = sd.query_devices(device, kind=kind)
    except ValueError as exc:  # no device, or several, matching a name
        raise DeviceError(f"{exc} (see `voice devices`)") from exc
    except sd.PortAudioError as exc:
        if device is None:
            raise DeviceError(f"no audio {kind} device found (PortAudio sees none)") from exc
        raise DeviceError(f"no audio {kind} device #{device} (see `voice devices`)") from exc
    channels = found[f"max_{kind}_channels"]
    if channels < 1:
        raise DeviceError(f"audio device {found['name']!r} has no {kind} channels (see `voice devices`)")
    return int(found["index"]), str(found["name"])


class _Stream(ABC):
    """What the mic and speaker streams share: opening, starting, stopping and reporting failure."""

    kind: Kind

    def __init__(self, device: DeviceSpec, block_frames: int, start: int) -> None:
        self._sd = _sounddevice()
        self.index, self.name = _resolve(self._sd, device, self.kind)
        self.block_frames = block_frames
        self.start_sample = start
        self._next = start
        self._closed = False
        self._failure: BaseException | None = None
        self._unexpected_end = threading.Event()
        self._stream: Any = self._open()

    def _open(self) -> Any:
        stream_class = self._sd.InputStream if self.kind == "input" else self._sd.OutputStream
        try:
            return stream_class(
                samplerate=ENGINE_RATE,
                blocksize=self.block_frames,
                device=self.index,
                channels=1,
                dtype="float32",
                latency="low",
                callback=self._callback,
                finished_callback=self._finished,
            )
        except (self._sd.PortAudioError, ValueError) as exc:
            raise DeviceError(
                f"cannot open {self.kind} device {self.name!r} at {ENGINE_RATE} Hz mono: {exc}"
            ) from exc

    @abstractmethod
    def _callback(self, data: Any, frames: int, time: Any, status: Any) -> None:
        """Moves one block between the device and the engine, on PortAudio's thread."""

    def _finished(self) -> None:
        if not self._closed:
            self._unexpected_end.set()

    def _fail(self, exc: BaseException) -> None:
        """Called on the device thread when handling a block failed: remember why and end the stream."""
        self._failure = exc
        raise self._sd.CallbackAbort from exc

    @property
    def latency_samples(self) -> int:
        """The device latency PortAudio reports for this stream, in samples of the engine clock."""
        return round(float(self._stream.latency) * ENGINE_RATE)

    @property
    def position(self) -> int:
        """Clock sample just after the last block delivered or played."""
        return self._next

    def check(self) -> None:
        """Raise DeviceError if the stream ended on its own (device unplugged, callback failed)."""
        if self._failure is not None:
            raise DeviceError(f"{self.kind} device {self.name!r} stopped: {self._failure}") from self._failure
        if self._unexpected_end.is_set():
            raise DeviceError(f"{self.kind} device {self.name!r} stopped unexpectedly (unplugged?)")

    def start(self) -> None:
        try:
            self._stream.start()
        except self._sd.PortAudioError as exc:
            raise DeviceError(f"cannot start {self.kind} device {self.name!r}: {exc}") from exc

    def close(self) -> None:
        """Stop and release the device; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self._stream.close()
        except self._sd.PortAudioError as exc:
            raise DeviceError(f"cannot close {self.kind} device {self.name!r}: {exc}") from exc

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class MicrophoneStream(_Stream):
    """Captures mono blocks and hands each to ``on_block`` on PortAudio's thread (keep it quick: queue it).

    Blocks follow each other on the clock from ``start``. If the device drops input (``overflows``
    counts it), the clock does not skip: the capture clock is the count of samples received. Each
    block carries its capture time (``device_time``), so what was lost can be told from the stamps.
    """

    kind: Kind = "input"

    def __init__(
        self,
        on_block: Callable[[AudioBlock], None],
        device: DeviceSpec = None,
        block_frames: int = 320,
        start: int = 0,
    ) -> None:
        self._on_block = on_block
        self.overflows = 0
        super().__init__(device, block_frames, start)

    def _callback(self, data: Any, frames: int, time: Any, status: Any) -> None:
        if status.input_overflow:
            self.overflows += 1
        block = AudioBlock(
            np.array(data[:, 0], dtype=np.float32), ENGINE_RATE, self._next, time.inputBufferAdcTime
        )
        self._next += frames
        try:
            self._on_block(block)
        except Exception as exc:
            self._fail(exc)


class Muter(Protocol):
    """Mutes this process's output stream in the sound server, which holds audio PortAudio cannot drop."""

    def mute(self, muted: bool) -> bool:
        """Mute or unmute at once; False when that cannot be done."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class _Stamp:
    """A block handed to the device: its output-clock start and when PortAudio says it will be played,
    moved onto ``time.monotonic`` (asking PortAudio the time from another thread would call into ALSA)."""

    start: int
    plays_at: float


class SpeakerStream(_Stream):
    """Plays a PlaybackBuffer: each device callback pulls exactly the frames the device asks for.

    ``on_played`` (optional, on PortAudio's thread) receives every block handed to the device with its
    output-clock start and the time it will be played: the reference signal an echo canceller needs.
    The latency is read from those stamps (PulseAudio's queue is longer than PortAudio's buffer says).
    With a ``muter`` (the sound server's control of this stream), :meth:`silence_unplayed` silences
    what the device holds but has not played yet, handing it back to the buffer.

    An open stream costs its callbacks even when it only plays silence (about half of idle listening's
    CPU on PulseAudio), so :meth:`rest_when_idle` stops it while the conversation is idle and starts it
    again when it is not. A stream (re)started through ALSA's pulse plugin may underrun in bursts or
    stall for up to two seconds before the sound server plays it, so a started stream hands out
    silence, leaving the buffer alone, until ``STEADY_CALLBACKS`` callbacks in a row came at least half
    a block apart without an underflow: no audio counts as played before the device plays it. So does
    a stream that underflowed (PortAudio restarts it: under load, in bursts of hundreds of callbacks
    that took a whole reply's audio with them). The output clock then moves on as if the device had
    played silence all along, so the stream's stamps keep their place against the mic's.
    """

    kind: Kind = "output"

    def __init__(
        self,
        buffer: PlaybackBuffer,
        device: DeviceSpec = None,
        block_frames: int = 320,
        on_played: Callable[[AudioBlock], None] | None = None,
        muter: Muter | None = None,
        rest_after_s: float | None = None,
    ) -> None:
        if buffer.rate != ENGINE_RATE:
            raise DeviceError(
                f"speaker plays {ENGINE_RATE} Hz audio, the playback buffer runs at {buffer.rate} Hz"
            )
        self.buffer = buffer
        self.underflows = 0
        self.silenced = 0  # times audio held by the device was silenced (silence_unplayed)
        self._on_played = on_played
        self._muter = muter
        self._muted_through: int | None = None  # the device holds silenced audio up to this clock sample
        self._stamp: _Stamp | None = None  # the latest block with a usable stamp
        self._dac: tuple[int, float] | None = None  # the latest block's start and its stream time to play
        self.rests = 0  # times the stream stopped while the conversation was idle
        self._rest_after_s = rest_after_s  # None: REST_AFTER_S as it is when asked
        self._resting = False
        self._idle_since: float | None = None
        self._warming = STEADY_CALLBACKS  # callbacks in a row still to come in time before audio plays
        self._last_callback = 0.0  # time.monotonic of the last callback while warming
        super().__init__(device, block_frames, buffer.position)

    def start(self) -> None:
        self._warming = STEADY_CALLBACKS
        super().start()

    @property
    def resting(self) -> bool:
        return self._resting

    def rest_when_idle(self, idle: bool) -> None:
        """Told after every mic block whether the conversation is idle (listening, nothing playing): the
        stream stops once it has been for ``rest_after_s`` with nothing held or muted, and starts again
        as soon as it is not. A failure to do either is reported by :meth:`check`, as a device's is."""
        if not idle:
            self._idle_since = None
            if self._resting:
                self._resting = False
                self._warming = STEADY_CALLBACKS
                self._start_or_stop(self._stream.start)
            return
        now = monotonic()
        if self._idle_since is None:
            self._idle_since = now
        elif (
            not self._resting
            and now - self._idle_since >= (REST_AFTER_S if self._rest_after_s is None else self._rest_after_s)
            and self._muted_through is None
            and not self.buffer.is_playing
            and not self.buffer.is_held
        ):
            self._resting = True  # before the stream ends: its end is no failure
            self._start_or_stop(self._stream.abort)  # stop() would wait for the queued silence to play out
            self.rests += 1

    def _start_or_stop(self, action: Callable[[], None]) -> None:
        try:
            action()
        except self._sd.PortAudioError as exc:
            self._failure = exc

    def _finished(self) -> None:
        if not self._resting:
            super()._finished()

    @property
    def latency_samples(self) -> int:
        """How far behind ``position`` the sample playing now is: from the latest block's stamp and the
        stream's time, else the latency PortAudio reports for the stream."""
        playing = self._playing_now()
        if playing is None:
            return super().latency_samples
        return max(0, self._next - playing)

    def silence_unplayed(self) -> int | None:
        """Silence the audio the device holds but has not played yet: the buffer takes it back (a paused
        reply plays it on resume) and hands out silence until the device has played through it, then
        :meth:`unmute_when_played` lets sound through again. Returns the output-clock sample from which
        nothing was heard, or None when nothing was silenced (no muter, no stamps, no audio held)."""
        playing = self._playing_now()  # before muting: what plays meanwhile counts as unheard
        if self._muter is None or playing is None or not self.buffer.holds_sound_from(playing):
            return None
        self.buffer.hold()
        if not self._muter.mute(True):
            self.buffer.release()
            return None
        self.buffer.take_back(playing)
        self._muted_through = self._next
        self.silenced += 1
        return playing

    def unmute_when_played(self) -> None:
        """Once the device has played through the silenced audio, unmute it and let the buffer play on."""
        if self._muted_through is None:
            return
        playing = self._playing_now()
        if playing is not None and playing >= self._muted_through:
            self._unmute()

    def _unmute(self) -> None:
        if self._muter is not None and self._muted_through is not None:
            self._muted_through = None
            self._muter.mute(False)
            self.buffer.release()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._unmute()  # a buffer held for a closed stream would stay silent on the next one
            if self._muter is not None:
                self._muter.close()

    def _playing_now(self) -> int | None:
        """The output-clock sample being played now, by the latest stamp (never past what was handed out)."""
        stamp = self._stamp
        if stamp is None:
            return None
        playing = stamp.start + round((monotonic() - stamp.plays_at) * ENGINE_RATE)
        if (
            self._next - playing > MAX_STAMPED_LATENCY_S * ENGINE_RATE
        ):  # stamps on another clock than the time
            return None
        return min(self._next, playing)

    def _callback(self, data: Any, frames: int, time: Any, status: Any) -> None:
        if self._warming:
            data.fill(0)
            self._warm_up(frames, time, status)
            return
        if status.output_underflow:
            # PortAudio restarts the stream, which may underrun again and again: warm it up afresh
            self.underflows += 1
            data.fill(0)
            self._warming = STEADY_CALLBACKS
            self._last_callback = monotonic()
            return
        start = self.buffer.position
        samples = self.buffer.pull(frames)
        data[:, 0] = samples
        self._next = start + frames
        ahead = time.outputBufferDacTime - time.currentTime
        if ahead > 0:  # a stream (re)starting stamps its blocks "now"
            self._stamp = _Stamp(start, monotonic() + ahead)
            self._dac = (start, time.outputBufferDacTime)
        if self._on_played is not None:
            try:
                self._on_played(AudioBlock(samples, ENGINE_RATE, start, time.outputBufferDacTime))
            except Exception as exc:
                self._fail(exc)

    def _warm_up(self, frames: int, time: Any, status: Any) -> None:
        """A callback of a started stream that is not steady yet: count it if it came in time without an
        underflow, else start counting again. On the last one, move the output clock on to where the
        next block plays by the stream's own time (not ours: a late callback would move it too far)."""
        now = monotonic()
        in_time = now - self._last_callback >= frames / ENGINE_RATE / 2
        self._last_callback = now
        if status.output_underflow or time.outputBufferDacTime <= time.currentTime or not in_time:
            self._warming = STEADY_CALLBACKS
            return
        self._warming -= 1
        if self._warming == 0 and self._dac is not None:
            start, plays_at = self._dac
            next_start = start + round(
                (time.outputBufferDacTime + frames / ENGINE_RATE - plays_at) * ENGINE_RATE
            )
            self.buffer.skip(max(0, next_start - self.buffer.position))
            self._next = self.buffer.position
