"""The LLM judge: the model's first word decides, its answer is quoted, and a model that fails is a no that
says so (a stand-in model in place of the LLM; the real one is asked in tests/sim/test_voice_test.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from voice.cancel import CancelToken
from voice.conversation.items import UserText
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.port import ChatEvent, ChatRequest, Finished, TextDelta
from voice.sim.judge import LlmJudge


class AnsweringModel:
    """Streams ``answer`` word by word, keeping the requests it was sent."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.requests: list[ChatRequest] = []

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        self.requests.append(request)
        if self.answer is None:
            raise LLMError(ErrorCode.TRANSPORT, Dispatch.NOT_SENT, "connection refused", retriable=True)
        for word in self.answer.split(" "):
            yield TextDelta(word + " ")
        yield Finished("stop")


@pytest.mark.parametrize(
    ("answer", "met"),
    [
        ("Yes. It says sorry.", True),
        ("yes", True),
        ("No, it doesn't apologise.", False),
        ("Maybe.", False),
        ("", False),
    ],
)
def test_the_first_word_decides_and_the_answer_is_quoted(answer: str, met: bool) -> None:
    model = AnsweringModel(answer)
    verdict, why = LlmJudge(model)("Sorry, I lost the thread.", "the reply apologises")

    assert verdict is met
    assert why == f'it answered "{answer.strip() or "nothing"}"'
    (request,) = model.requests
    (question,) = request.items
    assert isinstance(question, UserText)
    assert "the reply apologises" in question.text
    assert "Sorry, I lost the thread." in question.text
    assert request.settings.temperature == 0.0


def test_a_judge_that_fails_is_a_no_saying_why() -> None:
    verdict, why = LlmJudge(AnsweringModel(None))("Sorry.", "the reply apologises")

    assert verdict is False
    assert why.startswith("the judge failed: ")
    assert "connection refused" in why
