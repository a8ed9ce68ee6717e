"""``OpenAITranscriber``: the Transcriber port over ``POST {base}/audio/transcriptions``.

Speaches, faster-whisper-server, vLLM and OpenAI take a WAV upload and answer JSON. Word times are
asked for (``verbose_json`` with word granularity) only when the caller wants them, and used if given.
The context's last sentence goes as the request's ``prompt`` (voice.asr.context), as whisper's is.
"""

from __future__ import annotations

import io
import json
import wave
from typing import Any

import httpx

from voice.asr.context import prompt_from
from voice.asr.port import TimedWord, Transcript, require_engine_audio
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cancel import CancelToken
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.http_audio import AudioEndpoint
from voice.remote.limits import Limits
from voice.remote.pcm import WIDTH, to_pcm16
from voice.remote.urls import ServerUrl

_MAX_ANSWER = 1 << 20  # a transcript is a few hundred bytes; more is not one


class OpenAITranscriber:
    """Transcribes with the server at ``endpoint`` (``model``: the model name it serves, e.g. whisper-1)."""

    def __init__(
        self, endpoint: AudioEndpoint, *, model: str = "whisper-1", language: str | None = None
    ) -> None:
        self._endpoint = endpoint
        self._model = model
        self._language = language

    def __repr__(self) -> str:
        return f"OpenAITranscriber({self._endpoint.shown_url!r})"

    def __enter__(self) -> OpenAITranscriber:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the kept-alive connections to the server."""
        self._endpoint.close()

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
        wav = io.BytesIO()
        with wave.open(wav, "wb") as writer:
            writer.setnchannels(1)
            writer.setsampwidth(WIDTH)
            writer.setframerate(ENGINE_RATE)
            writer.writeframes(to_pcm16(audio.samples))
        upload = {"file": ("speech.wav", wav.getvalue(), "audio/wav")}
        fields: dict[str, str | list[str]] = {
            "model": self._model,
            "response_format": "verbose_json" if word_timings else "json",
        }
        if word_timings:
            fields["timestamp_granularities[]"] = ["word"]
        if self._language:
            fields["language"] = self._language
        if prompt_from(context):
            fields["prompt"] = prompt_from(context)
        with self._endpoint.post(cancel, files=upload, data=fields) as reply:
            body = _read_limited(reply)
        return self._parse(body)

    def _parse(self, body: bytes) -> Transcript:
        try:
            answer: Any = json.loads(body)
        except ValueError as exc:
            raise self._malformed("an answer that is not JSON") from exc
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            raise self._malformed("an answer without text")
        words = answer.get("words")
        timed: list[TimedWord] = []
        for word in words if isinstance(words, list) else ():
            try:
                timed.append(TimedWord(str(word["word"]).strip(), float(word["start"]), float(word["end"])))
            except (KeyError, TypeError, ValueError) as exc:
                raise self._malformed("a word timing") from exc
        return Transcript(answer["text"].strip(), tuple(timed))

    def _malformed(self, what: str) -> Exception:
        return self._endpoint.fail(
            ErrorCode.PROTOCOL, Dispatch.ACCEPTED, f"{self._endpoint.shown_url} sent {what}", retriable=False
        )


def _read_limited(reply: httpx.Response) -> bytes:
    body = bytearray()
    for piece in reply.iter_bytes():
        body += piece
        if len(body) > _MAX_ANSWER:
            break
    return bytes(body)


def open_openai_transcriber(url: ServerUrl, api_key: str | None, limits: Limits) -> OpenAITranscriber:
    """The transcriber at an OpenAI-compatible API base (``model``, ``language`` from its query)."""
    endpoint = AudioEndpoint.to(url, "/audio/transcriptions", api_key, limits)
    return OpenAITranscriber(
        endpoint, model=url.options.get("model", "whisper-1"), language=url.options.get("language")
    )
