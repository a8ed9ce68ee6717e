"""``OpenAIChatModel``: the ``ChatModel`` port over any OpenAI-compatible ``/chat/completions`` endpoint.

Streams server-sent events (parsed by httpx-sse), assembles tool calls, and maps every failure to an
:class:`LLMError`. The API key travels only in the Authorization header and never reaches a message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

from voice.cancel import CancelToken
from voice.conversation.items import to_openai_messages
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.exchange import CancellableExchange, verified_tls
from voice.llm.failures import RequestStage, redact_url, status_error, transport_error
from voice.llm.port import CANCELLED, ChatEvent, ChatRequest, Finished, TokenCounter
from voice.llm.reply import ReplyAssembler
from voice.llm.tokens import EstimatedTokenCounter

CONNECT_TIMEOUT_S = 15.0
IDLE_TIMEOUT_S = 180.0  # a slow local server may think for minutes before its first byte
_ERROR_BODY_LIMIT = 65_536
_END_MARKER = "[DONE]"


def request_payload(model: str, request: ChatRequest) -> dict[str, Any]:
    """The JSON body of a streamed chat-completions request."""
    settings = request.settings
    payload: dict[str, Any] = {
        "model": model,
        "messages": to_openai_messages(request.items, settings.system_prompt),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        payload["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in request.tools
        ]
    if settings.temperature is not None:
        payload["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        payload["max_tokens"] = settings.max_tokens
    return payload


class OpenAIChatModel:
    """A ``ChatModel`` for one base URL (e.g. ``http://127.0.0.1:8080/v1``) and model name.

    ``idle_timeout_s`` bounds the silence between any two reads, including the wait for the first byte.
    Pass ``http_client`` to share or instrument the connection pool; otherwise one is made and owned.
    ``context_tokens`` is the server's context window if known (``--context-tokens``); requests are
    counted with ``token_counter``, by default the estimate.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        http_client: httpx.Client | None = None,
        context_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        self.url = httpx.URL(base_url.rstrip("/") + "/chat/completions")
        self.model = model
        self._context_tokens = context_tokens
        self._token_counter = token_counter or EstimatedTokenCounter()
        self._idle_timeout_s = idle_timeout_s
        self._headers = {**(extra_headers or {}), "Accept": "text/event-stream", "Cache-Control": "no-store"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = httpx.Timeout(idle_timeout_s, connect=connect_timeout_s)
        self._owns_client = http_client is None
        self._client = http_client or httpx.Client(verify=verified_tls())

    def __repr__(self) -> str:
        return f"OpenAIChatModel({redact_url(self.url)!r}, {self.model!r})"

    @property
    def context_tokens(self) -> int | None:
        return self._context_tokens

    @property
    def token_counter(self) -> TokenCounter:
        return self._token_counter

    def __enter__(self) -> OpenAIChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        if cancel.cancelled:
            yield Finished(CANCELLED)
            return
        http_request = self._client.build_request(
            "POST",
            self.url,
            json=request_payload(self.model, request),
            headers=self._headers,
            timeout=self._timeout,
        )
        exchange = CancellableExchange(self._client, http_request)
        unsubscribe = cancel.on_cancel(exchange.abort)
        phase = RequestStage.REQUESTING
        try:
            response = exchange.response()
            if response is None:
                yield Finished(CANCELLED)
                return
            if response.status_code != 200:
                raise status_error(response, _read_limited(response), datetime.now(UTC))
            phase = RequestStage.STREAMING
            yield from self._events(response, cancel)
        except Exception as exc:
            # A cut read fails in whatever way the socket happened to fail: the cancel explains it.
            if cancel.cancelled:
                yield Finished(CANCELLED)
                return
            if isinstance(exc, httpx.HTTPError):
                raise transport_error(exc, phase, self.url, self._idle_timeout_s) from exc
            raise
        finally:
            unsubscribe()
            exchange.close()

    def _events(self, response: httpx.Response, cancel: CancelToken) -> Iterator[ChatEvent]:
        assembler = ReplyAssembler()
        for sse in EventSource(response).iter_sse():
            finished = sse.data.strip() == _END_MARKER
            events = assembler.finish() if finished else assembler.feed(self._chunk(sse))
            for event in events:
                if cancel.cancelled:  # a cancel wins every tie, also with completion
                    yield Finished(CANCELLED)
                    return
                yield event
            if finished:
                return
        if cancel.cancelled:
            yield Finished(CANCELLED)
        elif assembler.finish_reason is not None:
            # The server closed cleanly after its stop reason but without the end marker: still complete.
            yield from assembler.finish()
        else:
            raise LLMError(
                ErrorCode.PROTOCOL,
                Dispatch.UNKNOWN,
                f"the reply stream from {redact_url(self.url)} ended before the reply was complete",
                retriable=True,
            )

    def _chunk(self, sse: ServerSentEvent) -> Any:
        """The decoded JSON of one event (an empty event decodes to an empty chunk)."""
        if sse.event == "error":
            raise LLMError(
                ErrorCode.UNAVAILABLE,
                Dispatch.ACCEPTED,
                f"{redact_url(self.url)} sent an error event in the middle of the reply",
                retriable=True,
            )
        if not sse.data:
            return {}
        try:
            return json.loads(sse.data)
        except ValueError as exc:
            raise LLMError(
                ErrorCode.PROTOCOL,
                Dispatch.ACCEPTED,
                f"{redact_url(self.url)} sent event data that is not JSON",
                retriable=False,
            ) from exc


def _read_limited(response: httpx.Response) -> bytes:
    """The start of an error response's body (enough for its error code), tolerating a broken body."""
    body = bytearray()
    try:
        for piece in response.iter_bytes():
            body += piece
            if len(body) >= _ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass  # the status already says what failed
    return bytes(body)
