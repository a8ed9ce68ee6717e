"""How a call to a speech server failed, in the LLM's terms: a code, how far the request got, retriable.

Messages name the server's URL and what broke on our side; they never carry the server's own prose.
"""

from __future__ import annotations

from voice.errors import VoiceError
from voice.llm.errors import NEVER_RETRIED, Dispatch, ErrorCode, LLMError

# A speech server answers in seconds; a user should not wait the LLM's minutes for a voice.
CONNECT_TIMEOUT_S = 15.0
IDLE_TIMEOUT_S = 30.0


class SpeechServerError(VoiceError):
    """One failed call to a speech server; ``role`` is "ASR" or "TTS"."""

    def __init__(
        self, role: str, code: ErrorCode, dispatch: Dispatch, detail: str, *, retriable: bool
    ) -> None:
        self.role = role
        self.code = code
        self.dispatch = dispatch
        self.detail = detail
        self.retriable = retriable and code not in NEVER_RETRIED
        facts = f"{dispatch.value}, {'retriable' if self.retriable else 'not retriable'}"
        super().__init__(f"{role} server {code.value} ({facts}): {detail}")

    @classmethod
    def from_llm(cls, role: str, error: LLMError) -> SpeechServerError:
        """The same failure told of a speech server (the HTTP mapping is shared with the LLM client)."""
        return cls(role, error.code, error.dispatch, error.detail, retriable=error.retriable)
