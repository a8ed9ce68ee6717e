"""`voice ask "text"`: one text turn against the configured (or embedded) model, streamed to stdout."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from voice.cancel import CancelToken
from voice.components import open_chat_model
from voice.config.llm import add_llm_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.conversation.items import UserText
from voice.llm.errors import LLMError
from voice.llm.port import ChatModel, ChatRequest, ChatSettings, TextDelta
from voice.llm.retry import RetryPolicy


def register(subparsers: Any) -> None:
    ask = subparsers.add_parser("ask", help="ask the LLM one question in text; the reply streams to stdout")
    ask.add_argument("text", help="what to ask")
    ask.add_argument("--max-tokens", type=int, default=None, metavar="N", help="cap the reply's length")
    add_config_argument(ask)
    add_llm_arguments(ask)
    ask.set_defaults(run=_ask)


def _ask(args: argparse.Namespace) -> int:
    config = load_settings(args, os.environ).llm
    request = ChatRequest((UserText(args.text),), settings=ChatSettings(max_tokens=args.max_tokens))
    with open_chat_model(config) as model:
        print_reply(model, request, sys.stdout, RetryPolicy(), time.sleep)
    return 0


def print_reply(
    model: ChatModel, request: ChatRequest, out: TextIO, policy: RetryPolicy, sleep: Callable[[float], None]
) -> None:
    """Stream the reply to ``out``; retry as the assistant would (only before any text was shown)."""
    attempt = 0
    while True:
        attempt += 1
        shown = False
        try:
            for event in model.stream(request, CancelToken()):
                if isinstance(event, TextDelta):
                    out.write(event.text)
                    out.flush()
                    shown = True
            out.write("\n")
            return
        except LLMError as error:
            if shown:
                out.write("\n")  # the error line must not run on from the half reply
                out.flush()
            delay = policy.delay_before_retry(error, attempt, heard_anything=shown)
            if delay is None:
                raise
            sleep(delay)
