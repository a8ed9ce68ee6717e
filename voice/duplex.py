"""The driver core (docs/architecture.md §2): what happens for every mic block, on any ports.

A driver sets the pace (the virtual room's clock, the sound card's callbacks, a page's frames) and
hands each mic block to :meth:`Duplex.step`. The step is the same for all of them: finished work
reaches the engine; a glitch of either stream lines the echo reference up afresh; the output says
how far its audio has been heard, which the engine gets as playback progress; the block has the
speaker's echo cancelled out and goes to the engine.

The ports are small: an :class:`AudioInput` delivers AudioBlocks on the sample clock (to the
callback it was opened with) and an :class:`AudioOutput` plays the PlaybackBuffer on its own output
clock and says how far it has got. The sound devices (voice/audio/devices.py), the virtual room
(voice/sim/room.py) and a page over a websocket implement them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from voice.asr.echo_free import TranscribingAsrSignal
from voice.asr.port import Transcriber
from voice.audio.asr_signal import AsrSignal
from voice.audio.block import AudioBlock
from voice.audio.echo import EchoCanceller
from voice.audio.echo_reference import EchoReference
from voice.engine.inputs import MicAudio
from voice.runtime import ActionRunner
from voice.waking import WakeWordGate


class AudioInput(Protocol):
    """A started microphone, handing AudioBlocks on the sample clock to the callback it was opened with.

    ``overflows`` counts the times it lost input (the echo reference then lines up afresh).
    """

    overflows: int

    def check(self) -> None:
        """Raise DeviceError if the input ended on its own."""

    def close(self) -> None: ...


class AudioOutput(Protocol):
    """A started speaker, playing the PlaybackBuffer (pulling it, or fed from it) on its output clock.

    ``position`` is the output-clock sample just after the last one handed to it; ``latency_samples``
    how much later than that a sample is heard. ``underflows`` counts the times it ran dry.
    """

    underflows: int

    @property
    def position(self) -> int: ...

    @property
    def latency_samples(self) -> int: ...

    def check(self) -> None:
        """Raise DeviceError if the output ended on its own."""

    def close(self) -> None: ...


class EchoPath:
    """The speaker's echo taken out of the mic, and what ASR hears instead (voice/audio/asr_signal.py);
    the engine gets AEC3's output with the user put back where AEC3 muted double talk.

    ``played`` takes every block handed to the output (on the output's thread); without a canceller
    the mic goes to the engine as it is. While ``resting`` (a driver's idle listening) the canceller
    rests once the speaker has been silent for longer than its echo lasts.
    """

    def __init__(self, canceller: EchoCanceller | None, reference: EchoReference) -> None:
        self.canceller = canceller
        self.reference = reference
        self.resting = False
        self._asr_signal = AsrSignal() if canceller is not None else None
        self._realignments = reference.realignments

    def played(self, block: AudioBlock) -> None:
        self.reference.played(block)

    def transcriber(self, transcriber: Transcriber) -> Transcriber:
        """``transcriber`` hearing the raw mic once the echo is over, as the engine's ASR."""
        if self._asr_signal is None:
            return transcriber
        return TranscribingAsrSignal(transcriber, self._asr_signal)

    def words_heard(self, onset: int, end: int) -> AudioBlock | None:
        """What ASR heard of the utterance whose voice began at about ``onset``, up to ``end``
        (AsrSignal.words_heard); None without a canceller (ASR heard the engine's audio)."""
        return None if self._asr_signal is None else self._asr_signal.words_heard(onset, end)

    def clean(self, block: AudioBlock) -> AudioBlock:
        if self.canceller is None or self._asr_signal is None:
            return block
        reference = self.reference.for_mic(block)
        realigned, self._realignments = (
            self.reference.realignments != self._realignments,
            self.reference.realignments,
        )
        signal = self._asr_signal
        signal.add(block, reference, realigned)
        if self.resting and signal.speaker_long_silent:
            return signal.for_vad(self.canceller.rest(block))
        return signal.for_vad(self.canceller.process(block, reference))


class Duplex:
    """One conversation's step per mic block: the runner, the echo path and the glitches seen so far.

    ``engine_clock`` puts an output-clock sample on the engine's clock: the identity where the output
    clock is taken as the engine's (sound devices, a page); the virtual room knows how far its mic's
    count has slipped behind its speaker's.
    """

    def __init__(
        self,
        runner: ActionRunner,
        echo: EchoPath,
        engine_clock: Callable[[int], int] | None = None,
        wake: WakeWordGate | None = None,
    ) -> None:
        self.runner = runner
        self.echo = echo
        self.wake = wake  # with a wake word, the engine hears only what follows it
        if wake is not None:
            wake.attach(runner)
        self.glitches = {"overflows": 0, "underflows": 0}
        self.clock = 0  # mic clock sample after the last block heard
        self._engine_clock = engine_clock or (lambda sample: sample)
        self._seen = (0, 0)

    def step(self, block: AudioBlock, mic: AudioInput, speaker: AudioOutput) -> AudioBlock:
        """Everything one mic block sets off, as every driver does it; the block as the engine heard it."""
        self.catch_up(mic, speaker)
        return self.hear(block)

    def catch_up(self, mic: AudioInput, speaker: AudioOutput) -> tuple[int, int] | None:
        """Before a mic block: finished work in, glitches counted, playback progress reported.

        Returns (turn, samples of its audio heard) for the turn in flight.
        """
        self.runner.feed_finished_work()
        self.note_glitches(mic, speaker)
        return self._report_heard(speaker)

    def note_glitches(self, mic: AudioInput, speaker: AudioOutput) -> None:
        """Count new overflows and underflows; after any, the echo reference lines up afresh.

        A paced output (the virtual room) notes them before it plays, as a device's thread would.
        """
        seen = (mic.overflows, speaker.underflows)
        if seen != self._seen:
            self.glitches["overflows"] += max(0, seen[0] - self._seen[0])
            self.glitches["underflows"] += max(0, seen[1] - self._seen[1])
            self.echo.reference.glitch()
        self._seen = seen

    def hear(self, block: AudioBlock) -> AudioBlock:
        """The mic block, its echo cancelled, to the engine; returns it as the engine heard it."""
        self.clock = block.end
        block = self.echo.clean(block)
        if self.wake is not None:
            block = self.wake.hear(block)
        if block.frames:
            self.runner.feed(MicAudio(block))
        return block

    def streams_opened(self) -> None:
        """New streams count their glitches from zero."""
        self._seen = (0, 0)

    def streams_closed(self) -> None:
        """The echo reference lines up afresh once new streams' stamps settle."""
        self.echo.reference.restart()

    def _report_heard(self, speaker: AudioOutput) -> tuple[int, int] | None:
        """What the output has played reaches the engine, stamped with when its last sample was heard."""
        buffer, latency = self.runner.buffer, speaker.latency_samples
        audio_played_to = buffer.audio_played_at(speaker.position - latency)
        handed_out = buffer.clock_of(audio_played_to)  # when its last sample went to the output
        heard = speaker.position if handed_out is None else handed_out + latency
        return self.runner.report_progress(audio_played_to, self._engine_clock(heard))
