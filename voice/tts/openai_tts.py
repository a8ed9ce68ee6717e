"""``OpenAISynthesizer``: the Synthesizer port over ``POST {base}/audio/speech`` with ``response_format=pcm``.

The body is raw 16-bit mono PCM (24 kHz for OpenAI, Kokoro-FastAPI and speaches), read as it streams in.
The API gives no word times, so the spans are the estimate. A server that ignores ``pcm`` and sends a WAV
is read by its header.
"""

from __future__ import annotations

import io
import itertools
import wave
from collections.abc import Iterator

import numpy as np

from voice.audio.block import ENGINE_RATE, Samples
from voice.audio.resample import StreamResampler
from voice.cancel import CancelToken
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.http_audio import AudioEndpoint
from voice.remote.limits import Limits
from voice.remote.pcm import WIDTH, from_pcm16
from voice.remote.urls import ServerUrl
from voice.tts.port import Synthesis
from voice.tts.server_spans import estimated_synthesis, spoken_text

PCM_RATE = 24_000  # what response_format=pcm means in OpenAI's API
_MAX_AUDIO = 64 << 20  # bytes: over 20 minutes at 24 kHz, far beyond one chunk of a reply
_AUDIO_TYPES = ("audio/", "application/octet-stream")


class OpenAISynthesizer:
    """Speaks with ``voice`` of ``model`` at the server of ``endpoint``; ``rate``: its PCM sample rate."""

    def __init__(
        self, endpoint: AudioEndpoint, *, model: str = "tts-1", voice: str = "alloy", rate: int = PCM_RATE
    ) -> None:
        self._endpoint = endpoint
        self._model = model
        self._voice = voice
        self._rate = rate

    def __repr__(self) -> str:
        return f"OpenAISynthesizer({self._endpoint.shown_url!r})"

    def __enter__(self) -> OpenAISynthesizer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the kept-alive connections to the server."""
        self._endpoint.close()

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        spoken = spoken_text(text)
        if not spoken:
            return estimated_synthesis(text, [])
        payload = {"model": self._model, "voice": self._voice, "input": spoken, "response_format": "pcm"}
        with self._endpoint.post(cancel, json=payload) as reply:
            content_type = reply.headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type and not content_type.startswith(_AUDIO_TYPES):
                raise self._malformed(f"{content_type} instead of audio")
            samples = self._read_audio(reply.iter_bytes())
        return estimated_synthesis(text, [samples])

    def _read_audio(self, pieces: Iterator[bytes]) -> Samples:
        """The streamed body at ENGINE_RATE, converted as it arrives (a torn 16-bit sample waits)."""
        head = b""
        for piece in pieces:
            head += piece
            if len(head) >= 4:
                break
        if head.startswith(b"RIFF"):
            return self._read_wav(head + b"".join(pieces))
        resampler = StreamResampler(self._rate, ENGINE_RATE)
        out: list[Samples] = []
        held, total = b"", 0
        for piece in itertools.chain([head], pieces):
            total += len(piece)
            if total > _MAX_AUDIO:
                raise self._malformed("more audio than any chunk of text needs")
            held += piece
            usable = len(held) - len(held) % WIDTH
            out.append(resampler.process(from_pcm16(held[:usable])))
            held = held[usable:]
        out.append(resampler.flush())
        clipped: Samples = np.clip(np.concatenate(out), -1.0, 1.0).astype(np.float32)
        return clipped

    def _read_wav(self, data: bytes) -> Samples:
        try:
            with wave.open(io.BytesIO(data)) as wav:
                rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
                frames = wav.readframes(wav.getnframes())
        except (wave.Error, EOFError) as exc:
            raise self._malformed("a WAV that cannot be read") from exc
        if width != WIDTH:
            raise self._malformed(f"{8 * width}-bit audio (16-bit expected)")
        resampler = StreamResampler(rate, ENGINE_RATE)
        samples = np.concatenate([resampler.process(from_pcm16(frames, channels)), resampler.flush()])
        clipped: Samples = np.clip(samples, -1.0, 1.0).astype(np.float32)
        return clipped

    def _malformed(self, what: str) -> Exception:
        return self._endpoint.fail(
            ErrorCode.PROTOCOL, Dispatch.ACCEPTED, f"{self._endpoint.shown_url} sent {what}", retriable=False
        )


def open_openai_synthesizer(url: ServerUrl, api_key: str | None, limits: Limits) -> OpenAISynthesizer:
    """The voice at an OpenAI-compatible API base (``model``, ``voice``, the PCM ``rate`` from its query)."""
    return OpenAISynthesizer(
        AudioEndpoint.to(url, "/audio/speech", api_key, limits),
        model=url.options.get("model", "tts-1"),
        voice=url.options.get("voice", "alloy"),
        rate=int(url.options.get("rate", PCM_RATE)),
    )
