"""The ``ChatModel`` of the embedded llama.cpp server: it restarts a server that died and says what a
broken stream meant (the server died, or the prompt overflowed its context)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx

from voice.cancel import CancelToken
from voice.errors import VoiceError
from voice.llm.embedded_server import EmbeddedServer, describe_exit
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import CANCELLED, ChatEvent, ChatRequest, Finished, TokenCounter
from voice.llm.tokens import ServerTokenCounter

DEATH_WAIT_S = 1.0  # a killed server's sockets close a moment before its exit status is there to read


class EmbeddedChatModel:
    """The ``ChatModel`` of the embedded server; its users never see the server die.

    Before each request a server that died is started again. A request that failed because the server
    died is an ``unavailable`` error, retriable: the next attempt finds a fresh server. A stream dropped
    without a word because the prompt did not fit (llama-cpp-python answers 200 and then closes it) is
    ``too-large``, as a ``context_length_exceeded`` answer would be.
    """

    def __init__(self, server: EmbeddedServer) -> None:
        self._server = server
        self._http = httpx.Client(trust_env=False)
        self._counter = ServerTokenCounter(lambda: server.root_url, self._http)
        self._client: tuple[str, OpenAIChatModel] | None = None  # for the server's current URL

    @property
    def context_tokens(self) -> int:
        return self._server.context_tokens

    @property
    def base_url(self) -> str:
        """The embedded server's OpenAI-compatible URL now (a restarted server may listen elsewhere)."""
        return self._server.url

    @property
    def token_counter(self) -> TokenCounter:
        return self._counter

    def __enter__(self) -> EmbeddedChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        if cancel.cancelled:
            yield Finished(CANCELLED)
            return
        try:
            running = self._server.ensure_running(lambda: cancel.cancelled)
        except VoiceError as exc:  # it cannot start (its model file went away, ...) or voice is stopping
            raise LLMError(
                ErrorCode.UNAVAILABLE,
                Dispatch.NOT_SENT,
                f"the embedded LLM server is down and did not start again: {exc}",
                retriable=True,
            ) from exc
        if not running:
            yield Finished(CANCELLED)
            return
        delivered = False
        try:
            for event in self._current_client().stream(request, cancel):
                delivered = True
                yield event
        except LLMError as error:
            explained = self._explain(error, request, delivered)
            if explained is None:
                raise
            raise explained from error

    def _current_client(self) -> OpenAIChatModel:
        url = self._server.url
        if self._client is None or self._client[0] != url:
            client = OpenAIChatModel(
                url,
                self._server.model,
                http_client=self._http,
                context_tokens=self.context_tokens,
                token_counter=self._counter,
            )
            self._client = (url, client)
        return self._client[1]

    def _explain(self, error: LLMError, request: ChatRequest, delivered: bool) -> LLMError | None:
        """What a broken connection meant: the server died, or the prompt overflowed its context."""
        if error.code not in (ErrorCode.TRANSPORT, ErrorCode.PROTOCOL):
            return None
        code = self._server.exit_code(DEATH_WAIT_S)
        if code is not None:
            return LLMError(
                ErrorCode.UNAVAILABLE,
                error.dispatch,
                f"the embedded LLM server stopped ({describe_exit(code)}); the next request starts it again",
                retriable=True,
            )
        if delivered:
            return None
        tokens = self._counter.count(request)
        if tokens < self.context_tokens:
            return None
        return LLMError(
            ErrorCode.TOO_LARGE,
            Dispatch.REJECTED,
            f"the conversation takes {tokens} tokens, more than the embedded model's context of "
            f"{self.context_tokens}",
            retriable=False,
        )
