"""``WyomingTranscriber``: the Transcriber port over a Wyoming speech-to-text server (wyoming-faster-whisper).

One connection per utterance: ``transcribe``, ``audio-start``, ``audio-chunk``..., ``audio-stop``, answered by
``transcript``. A server that streams its transcript (``transcript-start``, ``transcript-chunk``...,
``transcript``, ``transcript-stop``) keeps the call alive with each chunk, and its chunks stand in for a
``transcript`` it never sends.
"""

from __future__ import annotations

from wyoming.asr import Transcribe, TranscriptChunk, TranscriptStop
from wyoming.asr import Transcript as WyomingTranscript
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from voice.asr.port import Transcript, require_engine_audio
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cancel import CancelToken
from voice.remote.limits import Limits
from voice.remote.pcm import WIDTH, to_pcm16
from voice.remote.urls import ServerUrl
from voice.remote.wyoming_link import WyomingConnection, WyomingLink

_CHUNK_SAMPLES = 1024  # what Wyoming satellites send: 64 ms at 16 kHz


class WyomingTranscriber:
    """Sends each utterance to ``link``'s server; ``model`` and ``language`` go in ``transcribe`` if given.

    Wyoming gives no word times, so ``word_timings`` gets a transcript without words; ``over_reply`` is the
    server's business (it decodes how it decodes), and ``context`` goes unsent: its ``transcribe`` takes
    no prompt.
    """

    def __init__(self, link: WyomingLink, *, model: str | None = None, language: str | None = None) -> None:
        self._link = link
        self._model = model
        self._language = language

    def __repr__(self) -> str:
        return f"WyomingTranscriber({self._link.url!r})"

    def __enter__(self) -> WyomingTranscriber:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: every call opens and closes its own connection."""

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        require_engine_audio(audio, "remote ASR")
        pcm = to_pcm16(audio.samples)
        step = _CHUNK_SAMPLES * WIDTH
        with self._link.connect(cancel) as connection:
            connection.send(Transcribe(name=self._model, language=self._language).event())
            connection.send(AudioStart(rate=ENGINE_RATE, width=WIDTH, channels=1).event())
            for offset in range(0, len(pcm), step):
                piece = pcm[offset : offset + step]
                connection.send(AudioChunk(rate=ENGINE_RATE, width=WIDTH, channels=1, audio=piece).event())
            connection.send(AudioStop().event())
            return Transcript(_answer(connection).strip())


def _answer(connection: WyomingConnection) -> str:
    chunks: list[str] = []
    while True:
        event = connection.receive()
        if WyomingTranscript.is_type(event.type):
            text = event.data.get("text")
            if not isinstance(text, str):
                raise connection.malformed("a transcript without text")
            return text
        if TranscriptChunk.is_type(event.type):
            text = event.data.get("text")
            if not isinstance(text, str):
                raise connection.malformed("a transcript chunk without text")
            chunks.append(text)
        elif TranscriptStop.is_type(event.type):
            return "".join(chunks)


def open_wyoming_transcriber(url: ServerUrl, api_key: str | None, limits: Limits) -> WyomingTranscriber:
    """The transcriber at a wyoming:// URL (``model`` and ``language`` from its query); connects per call."""
    return WyomingTranscriber(
        WyomingLink.to(url, limits), model=url.options.get("model"), language=url.options.get("language")
    )
