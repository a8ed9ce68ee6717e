"""A Transcriber that hears each utterance as voice/audio/asr_signal.py keeps it: the mic with the
speaker's echo subtracted linearly, from where the user began (docs/architecture.md §3)."""

from __future__ import annotations

from voice.asr.port import TimedWord, Transcriber, Transcript
from voice.audio.asr_signal import AsrSignal
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken


class TranscribingAsrSignal:
    """A Transcriber that hears each utterance through :meth:`AsrSignal.words_for`."""

    def __init__(self, inner: Transcriber, signal: AsrSignal) -> None:
        self._inner = inner
        self._signal = signal

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        if self._signal.only_echo(audio):
            return Transcript("")  # no words of the user's: whisper would only guess at the echo
        words = self._signal.words_for(audio)
        over_reply = over_reply or self._signal.speaker_audible_over(words)
        heard = self._inner.transcribe(
            words, word_timings=word_timings, over_reply=over_reply, cancel=cancel, context=context
        )
        earlier = (audio.start - words.start) / audio.rate  # word times stay relative to ``audio``
        if not earlier:
            return heard
        timed = tuple(TimedWord(w.text, w.start_s - earlier, w.end_s - earlier) for w in heard.words)
        return Transcript(heard.text, timed, earlier_s=earlier)
