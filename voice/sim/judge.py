"""An LLM the user names, asked whether a reply meets a criterion (``"judge": "the reply apologises"``).

Off unless named (`voice test --judge-llm URL`): a judge is a model's opinion, so a suite that runs
without one still checks everything else and reports the judged expectations as skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from voice.cancel import CancelToken
from voice.components import open_chat_model
from voice.config.llm import LlmConfig
from voice.conversation.items import UserText
from voice.llm.errors import LLMError
from voice.llm.port import ChatModel, ChatRequest, ChatSettings, TextDelta
from voice.sim.expectations import Judge

JUDGE_PROMPT = (
    "You check a voice assistant's reply against one criterion. "
    "Answer with one word, yes or no, then at most one short sentence why."
)


class LlmJudge:
    """Asks ``model`` one question per expectation, at temperature 0; its first word decides."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    def __call__(self, text: str, criterion: str) -> tuple[bool, str]:
        question = (
            f'Reply: "{text}"\nCriterion: {criterion}\nDoes the reply meet the criterion? Answer yes or no.'
        )
        request = ChatRequest(
            (UserText(question),), settings=ChatSettings(JUDGE_PROMPT, temperature=0.0, max_tokens=40)
        )
        try:
            answer = "".join(
                event.text
                for event in self._model.stream(request, CancelToken())
                if isinstance(event, TextDelta)
            )
        except LLMError as exc:
            return False, f"the judge failed: {exc}"
        first = answer.strip().split(maxsplit=1)[0].strip(".,!:;\"'").lower() if answer.strip() else ""
        said = " ".join(answer.split())[:80] or "nothing"
        return first == "yes", f'it answered "{said}"'


@contextlib.contextmanager
def open_judge(config: LlmConfig | None) -> Iterator[Judge | None]:
    """The judge ``config`` names, for as long as the block runs; None when none is named."""
    if config is None:
        yield None
        return
    with open_chat_model(config) as model:
        yield LlmJudge(model)
