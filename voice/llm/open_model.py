"""The configured LLM opened for a session: a remote server's client, or the embedded server and its
client when no URL is set."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from voice.errors import ConfigError
from voice.llm.config import LlmConfig
from voice.llm.embedded_chat import EmbeddedChatModel
from voice.llm.embedded_server import N_CTX, EmbeddedServer
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import SizedChatModel


@contextmanager
def open_chat_model(config: LlmConfig) -> Iterator[SizedChatModel]:
    """The configured model, or the embedded server's when no URL is set; everything stops on exit."""
    if config.url is not None:
        if not config.model:
            raise ConfigError(f"the LLM at {config.url} needs a model name")
        with OpenAIChatModel(
            config.url,
            config.model,
            api_key=config.api_key,
            extra_headers=dict(config.extra_headers),
            context_tokens=config.context_tokens,
        ) as remote:
            yield remote
        return
    with (
        EmbeddedServer(config.gguf, model=config.model, n_ctx=config.context_tokens or N_CTX) as server,
        EmbeddedChatModel(server) as local,
    ):
        yield local
