"""The browser as microphone and speaker (`voice kiosk --audio websocket`, docs/architecture.md §1.2 and §7).

One page at a time is the audio device. Its binary frames (16 kHz mono s16le) are the microphone,
and each frame fetches as much reply audio from the playback buffer, sent straight back to it to
play: the page's audio clock paces both directions, so they never drift apart. The page reports how
far its speaker got (``playback.position``, its own output latency already taken off), and only that
counts as heard. While no page talks, a timer feeds silence at real time and the reply plays to
nobody, counted as heard as it goes, so typed input still gets its answer and its captions.

The page's 20 ms frames reach the driver gathered into blocks of the driver's ``block_ms``, as a sound
device's do: the driver's backlog counts blocks, so 20 ms ones would halve how far a busy loop may
fall behind before the user's words are dropped. While the driver reopens the devices the page's
frames wait for the reopened mic.

This is the device driver's audio input and output (``open_input`` / ``open_output``), so echo
cancellation, VAD and barge-in work on the page's audio exactly as on a local microphone.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.chat.driver import BACKLOG_S, DeviceSettings
from voice.client_events import Failure
from voice.errors import DeviceError

IDLE_BLOCK_S = 0.04  # the silent clock's block while no page talks
RELEASE_S = 0.5  # a page whose frames stopped this long is no longer the microphone
LATE_S = 0.2  # a loop that stalled longer skips the lost time instead of feeding a burst of silence
MAX_FRAME_BYTES = 2 * ENGINE_RATE  # one second of audio in one frame is already far too much
EPOCH_S = 1000.0  # page audio is stamped from here: a stamp of 0 means "no time" to the echo reference
OFFSETS_KEPT = 50  # position reports whose median says where the page's speaker is, about a second
BUSY = "audio.busy"  # the error code a second talking page gets


class AudioPeer(Protocol):
    """A connected page as the server hands it in: where its reply audio goes (without waiting)."""

    def send_audio(self, pcm: bytes) -> None: ...


class BrowserAudio:
    """The talking page's audio for one DeviceConversation, and the silent clock while none talks.

    The server calls :meth:`take_frame` for every binary frame, :meth:`take_position` for every
    ``playback.position`` and :meth:`peer_left` when a connection closes, all on the event loop.
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, block_ms: int = DeviceSettings.block_ms
    ) -> None:
        self._clock = clock
        self._block = block_ms * ENGINE_RATE // 1000  # mic samples handed to the driver at once
        self._pending: list[np.ndarray] = []  # the holder's mic frames not yet handed on
        self._pending_stamp = 0.0  # the stamp of their first sample
        self._buffer: PlaybackBuffer | None = None
        self._on_played: Callable[[AudioBlock], None] | None = None
        self._deliver: Callable[[AudioBlock], None] | None = None
        self._idle: asyncio.Task[None] | None = None
        self._mic_clock = 0  # where the next mic block starts, continuing across pages
        self._holder: AudioPeer | None = None
        self._last_frame = 0.0
        self._refused: dict[int, float] = {}  # id of a page told it is not the device, and when
        self._base = 0  # output-clock sample of the first sample sent to the holder
        self._sent = 0  # samples sent to the holder
        self._heard = 0  # of those, how many it reported played
        self._page_mic = 0  # mic samples the holder sent
        self._offsets: deque[int] = deque(maxlen=OFFSETS_KEPT)
        self._fresh_report = False  # a position came since the last frame

    @property
    def holder(self) -> AudioPeer | None:
        """The page that is the microphone and speaker now, if any."""
        return self._holder

    # -- the driver's side: DeviceConversation's open_output and open_input --------------------------

    def open_output(self, buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> PageSpeaker:
        self._buffer, self._on_played = buffer, on_played
        return PageSpeaker(self)

    def open_input(self, deliver: Callable[[AudioBlock], None]) -> PageMicrophone:
        self._deliver = deliver
        self._mic_clock = 0  # a reopened stream counts from 0, as a sound device's: the driver places it
        self._hand_on(deliver)  # what the talking page said while the driver reopened its devices
        self._idle = asyncio.get_running_loop().create_task(self._tick_while_idle())
        return PageMicrophone(self)

    def close(self) -> None:
        """Stop the silent clock; the talking page's frames wait for the driver's next open_input."""
        if self._idle is not None:
            self._idle.cancel()
        self._idle = self._deliver = None

    def check(self) -> None:
        """Raise DeviceError if the silent clock died (a bug: it must never stop on its own)."""
        idle = self._idle
        if idle is not None and idle.done() and not idle.cancelled() and idle.exception() is not None:
            raise DeviceError(f"the kiosk's silent clock stopped: {idle.exception()}")

    @property
    def position(self) -> int:
        """Output-clock sample just after the last one handed out (to the talking page, or to nobody)."""
        return self._buffer.position if self._buffer is not None else 0

    @property
    def latency_samples(self) -> int:
        """How far the talking page's speaker is behind what it was sent: sent but not reported played."""
        return self._sent - self._heard if self._holder is not None else 0

    # -- the server's side ---------------------------------------------------------------------------

    def take_frame(self, peer: AudioPeer, data: bytes) -> Failure | None:
        """A mic frame from ``peer``: it becomes the device if none is; an error event to send it, if any."""
        if not data or len(data) % 2 or len(data) > MAX_FRAME_BYTES:
            return Failure(
                "bad_frame",
                f"an audio frame is 16 kHz mono s16le of 2 to {MAX_FRAME_BYTES} bytes, not {len(data)}",
            )
        now = self._clock()
        if peer is not self._holder:
            if self._holder is not None and now - self._last_frame < RELEASE_S:
                return self._refuse(peer, now)
            self._claim(peer)
        self._last_frame = now
        mic = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0
        frames = len(mic)
        self._page_mic += frames
        if not self._pending:
            self._pending_stamp = EPOCH_S + (self._page_mic - frames) / ENGINE_RATE
        self._pending.append(mic)
        buffer, deliver, on_played = self._buffer, self._deliver, self._on_played
        if buffer is None or deliver is None or on_played is None:
            self._keep_while_closed()  # the driver is reopening the devices: the words wait for it
            return None
        if self._fresh_report:  # the page reports just before the frame captured at the same moment
            self._offsets.append(self._page_mic - self._heard)
            self._fresh_report = False
        start = buffer.position
        reply = buffer.pull(frames)  # as much as the page captured: its clock paces the speaker
        on_played(AudioBlock(reply, ENGINE_RATE, start, self._play_time(start - self._base)))
        self._sent += frames
        peer.send_audio((np.clip(reply, -1.0, 1.0) * 32767.0).astype("<i2").tobytes())
        if sum(len(pending) for pending in self._pending) >= self._block:
            self._hand_on(deliver)
        return None

    def take_position(self, peer: AudioPeer, samples: int) -> None:
        """``playback.position`` from ``peer``: what its speaker has played; only the device's counts."""
        if peer is not self._holder:
            return
        self._heard = max(self._heard, min(samples, self._sent))
        self._fresh_report = True

    def peer_left(self, peer: AudioPeer) -> None:
        """A connection closed: if it was the device, the silent clock takes over at once."""
        self._refused.pop(id(peer), None)
        if peer is self._holder:
            self._release()

    # -- inside --------------------------------------------------------------------------------------

    def _claim(self, peer: AudioPeer) -> None:
        if self._holder is not None:
            self._release()  # a holder that went quiet: what it sent last is heard before the new one
        self._refused.pop(id(peer), None)
        self._holder = peer
        self._base = self._buffer.position if self._buffer is not None else 0
        self._sent = self._heard = self._page_mic = 0
        self._offsets.clear()
        self._fresh_report = False

    def _release(self) -> None:
        # audio sent but not yet played is lost with the page; from here the silent clock "plays" it
        self._holder = None
        if self._deliver is not None:
            self._hand_on(self._deliver)  # its last words come before the silent clock's blocks
        self._pending.clear()

    def _keep_while_closed(self) -> None:
        """Keep the newest BACKLOG_S of the page's frames, as much as the driver's own backlog holds."""
        kept = sum(len(pending) for pending in self._pending)
        while kept > BACKLOG_S * ENGINE_RATE:
            kept -= len(self._pending.pop(0))
        self._pending_stamp = EPOCH_S + (self._page_mic - kept) / ENGINE_RATE

    def _hand_on(self, deliver: Callable[[AudioBlock], None]) -> None:
        """The holder's mic frames gathered so far, as one block of the driver's mic."""
        if not self._pending:
            return
        mic = np.concatenate(self._pending)
        self._pending.clear()
        deliver(AudioBlock(mic, ENGINE_RATE, self._mic_clock, self._pending_stamp))
        self._mic_clock += len(mic)

    def _refuse(self, peer: AudioPeer, now: float) -> Failure | None:
        """Tell a second talking page once (not at every frame) that another page is the device."""
        last = self._refused.get(id(peer))
        self._refused[id(peer)] = now
        if last is not None and now - last < RELEASE_S:
            return None
        return Failure(BUSY, "another page is the microphone and speaker; this one only watches")

    def _play_time(self, index: int) -> float | None:
        """When the holder's speaker plays its sample ``index``, on the stamps of its mic blocks."""
        if not self._offsets:
            return None
        return EPOCH_S + (index + statistics.median(self._offsets)) / ENGINE_RATE

    async def _tick_while_idle(self) -> None:
        loop = asyncio.get_running_loop()
        frames = round(IDLE_BLOCK_S * ENGINE_RATE)
        due = loop.time()
        while True:
            due += IDLE_BLOCK_S
            await asyncio.sleep(max(0.0, due - loop.time()))
            if self._holder is not None:
                if self._clock() - self._last_frame < RELEASE_S:
                    due = loop.time()
                    continue
                self._release()
            if loop.time() - due > LATE_S:
                due = loop.time()
            self._silent_block(frames)

    def _silent_block(self, frames: int) -> None:
        buffer, deliver, on_played = self._buffer, self._deliver, self._on_played
        if buffer is None or deliver is None or on_played is None:
            return
        start = buffer.position
        on_played(AudioBlock(buffer.pull(frames), ENGINE_RATE, start))
        deliver(AudioBlock(np.zeros(frames, dtype=np.float32), ENGINE_RATE, self._mic_clock))
        self._mic_clock += frames


class PageMicrophone:
    """The driver's AudioInput: blocks come from the talking page, or from the silent clock."""

    overflows = 0

    def __init__(self, audio: BrowserAudio) -> None:
        self._audio = audio

    def check(self) -> None:
        self._audio.check()

    def close(self) -> None:
        self._audio.close()


class PageSpeaker:
    """The driver's AudioOutput: what the talking page has not reported played yet is its latency."""

    underflows = 0

    def __init__(self, audio: BrowserAudio) -> None:
        self._audio = audio

    @property
    def position(self) -> int:
        return self._audio.position

    @property
    def latency_samples(self) -> int:
        return self._audio.latency_samples

    def check(self) -> None:
        self._audio.check()

    def close(self) -> None:
        """The input's close stops the clock; the speaker has nothing of its own to release."""
