"""What the OpenAI-compatible speech backends share: an endpoint, its limits, failures mapped as the LLM's.

Transport failures reuse the LLM client's mapping (connect, idle, broken stream). Statuses get the same
codes and retry marks, with speech's own hints; the server's error body is never shown.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from voice.cancel import CancelToken
from voice.llm.errors import Dispatch, ErrorCode
from voice.llm.exchange import CancellableExchange, verified_tls
from voice.llm.failures import RequestStage, classify_status, redact_url, transport_error
from voice.remote.errors import CONNECT_TIMEOUT_S, IDLE_TIMEOUT_S, SpeechServerError
from voice.remote.limits import Limits
from voice.remote.urls import ServerUrl


class AudioEndpoint:
    """One endpoint (``{base}/audio/...``) of a server, with its own connection pool and limits."""

    def __init__(
        self,
        role: str,
        base_url: str,
        path: str,
        *,
        api_key: str | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
    ) -> None:
        self.role = role
        self.url = httpx.URL(base_url.rstrip("/") + path)
        self.shown_url = redact_url(self.url)
        self.idle_timeout_s = idle_timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(idle_timeout_s, connect=connect_timeout_s),
            verify=verified_tls(),
        )

    @classmethod
    def to(cls, url: ServerUrl, path: str, api_key: str | None, limits: Limits) -> AudioEndpoint:
        """``path`` under the API base of an http(s) URL the table of speech backends has checked."""
        return cls(
            url.role,
            url.base,
            path,
            api_key=api_key,
            connect_timeout_s=limits.connect_timeout_s,
            idle_timeout_s=limits.idle_timeout_s,
        )

    def close(self) -> None:
        self._client.close()

    def fail(self, code: ErrorCode, dispatch: Dispatch, detail: str, *, retriable: bool) -> SpeechServerError:
        return SpeechServerError(self.role, code, dispatch, detail, retriable=retriable)

    @contextmanager
    def post(self, cancel: CancelToken | None, **content: object) -> Iterator[httpx.Response]:
        """POST with ``content`` (httpx's json/data/files) and yield a 200 response streaming its body.

        Every httpx failure, while sending or while the caller reads the body, leaves as a
        :class:`SpeechServerError`; so does ``cancel``, which cuts the exchange at once whatever it waits on.
        """
        cancel = cancel or CancelToken()
        if cancel.cancelled:
            raise self._cancelled(cancel, Dispatch.NOT_SENT)
        request = self._client.build_request("POST", self.url, **content)  # type: ignore[arg-type]
        exchange = CancellableExchange(self._client, request)
        unsubscribe = cancel.on_cancel(exchange.abort)
        phase = RequestStage.REQUESTING
        try:
            response = exchange.response()
            if response is None:
                raise self._cancelled(cancel, Dispatch.UNKNOWN)
            if response.status_code != 200:
                raise self._status_error(response)
            phase = RequestStage.STREAMING
            yield response
        except Exception as exc:
            # A cut read fails in whatever way the socket happened to fail: the cancel explains it.
            if cancel.cancelled:
                dispatch = Dispatch.ACCEPTED if phase is RequestStage.STREAMING else Dispatch.UNKNOWN
                raise self._cancelled(cancel, dispatch) from exc
            if isinstance(exc, httpx.HTTPError):
                error = transport_error(exc, phase, self.url, self.idle_timeout_s)
                raise SpeechServerError.from_llm(self.role, error) from exc
            raise
        finally:
            unsubscribe()
            exchange.close()

    def _cancelled(self, cancel: CancelToken, dispatch: Dispatch) -> SpeechServerError:
        return self.fail(
            ErrorCode.CANCELLED, dispatch, f"{cancel.reason}: left {self.shown_url}", retriable=False
        )

    def _status_error(self, response: httpx.Response) -> SpeechServerError:
        status = response.status_code
        code, dispatch, retriable = _classify(status)
        detail = f"HTTP {status} {response.reason_phrase} from {self.shown_url}".rstrip()
        hint = _HINTS.get(status)
        return self.fail(code, dispatch, f"{detail}; {hint}" if hint else detail, retriable=retriable)


_HINTS = {
    401: "check the speech server's API key",
    403: "check the speech server's API key",
    404: "is this an OpenAI-compatible audio server, and its URL the one ending in /v1?",
}


def _classify(status: int) -> tuple[ErrorCode, Dispatch, bool]:
    """As an LLM server's status, except that a missing endpoint means the server has no such audio API."""
    if status in (404, 405):
        return ErrorCode.UNSUPPORTED, Dispatch.REJECTED, False
    return classify_status(status)
