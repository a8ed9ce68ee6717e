"""A conversation of hundreds of exchanges against the real embedded llama.cpp server (SmolLM2-135M).

Without a budget the history outgrows the server's 2048-token context after about 35 exchanges and
every reply fails from then on. With it, every request fits, the oldest exchanges go, and a session
resumed from its log sends exactly what the live one would have.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from voice.cancel import CancelToken
from voice.components import context_budget, open_chat_model
from voice.config.llm import LlmConfig
from voice.conversation.continuation import Conversation, Request
from voice.conversation.items import UserText
from voice.conversation.log_records import HistoryTrimmed
from voice.conversation.session_log import SessionLog, load_session
from voice.llm.port import ChatRequest, ChatSettings, SizedChatModel, TextDelta

pytestmark = pytest.mark.models

EXCHANGES = 300
SETTINGS = ChatSettings(max_tokens=8, temperature=0.0)


@pytest.fixture(scope="module")
def model() -> Iterator[SizedChatModel]:
    with open_chat_model(LlmConfig()) as embedded:  # the default: llama.cpp with a 2048-token context
        yield embedded


def answer(model: SizedChatModel, request: Request) -> tuple[str, int]:
    """The streamed reply, and the prompt tokens the server's own tokenizer counts for the request."""
    chat = ChatRequest(request.items, settings=SETTINGS)
    text = "".join(e.text for e in model.stream(chat, CancelToken()) if isinstance(e, TextDelta))
    return text.strip(), model.token_counter.count(chat)


def question(number: int) -> str:
    return f"Exchange {number}: what is one thing people often say about the number {number}?"


@pytest.mark.timeout(900)  # 300 real requests: minutes by design, on a loaded machine up to ten
def test_three_hundred_exchanges_all_answered_within_the_context(
    model: SizedChatModel, tmp_path: Path
) -> None:
    budget = context_budget(model, SETTINGS)
    assert budget is not None
    conversation = Conversation(budget)
    prompt_sizes: list[int] = []
    with SessionLog.create(tmp_path / "long.jsonl") as log:
        for number in range(1, EXCHANGES + 1):
            request = conversation.submit(question(number), f"q{number}")
            assert request is not None
            reply, prompt_tokens = answer(model, request)  # an overflow would raise LLMError here
            prompt_sizes.append(prompt_tokens)
            conversation.add_text(reply)
            if number % 10 == 0 and " " in reply:  # now and then the user cuts in
                conversation.cut_in(reply.split(" ")[0])
            else:
                conversation.complete()
            log.append_all(conversation.take_events())
        last = conversation.submit(question(EXCHANGES + 1), "last")
    assert last is not None

    assert model.context_tokens is not None
    assert max(prompt_sizes) + 8 <= model.context_tokens  # counted by the server's own tokenizer
    assert last.items[0] == UserText(question(last_kept_question(last)))
    assert last_kept_question(last) > EXCHANGES // 2  # the oldest exchanges were dropped
    events = [logged.event for logged in load_session(tmp_path / "long.jsonl").events]
    assert any(isinstance(event, HistoryTrimmed) for event in events)
    resumed = Conversation.from_events(events, budget)
    assert resumed.submit(question(EXCHANGES + 1), "last") == last


def last_kept_question(request: Request) -> int:
    """The number of the oldest question the request still carries."""
    first = request.items[0]
    assert isinstance(first, UserText)
    return int(first.text.split(":")[0].removeprefix("Exchange "))
