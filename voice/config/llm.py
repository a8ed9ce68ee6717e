"""Where the LLM is: flags win over the environment; with no URL, the embedded llama.cpp server runs.

``--llm-url``/``VOICE_LLM_URL`` (a base URL such as ``http://127.0.0.1:8080/v1``), ``--llm-model``/
``VOICE_LLM_MODEL``, ``VOICE_LLM_API_KEY`` (environment only, so it never shows in a process list),
``VOICE_LLM_HEADERS`` (a JSON object of extra headers), ``--llm-gguf``/``VOICE_LLM_GGUF`` (a model
file for the embedded server) and ``--context-tokens``/``VOICE_CONTEXT_TOKENS`` (the model's context
window: what a remote server accepts, or the size the embedded server runs with).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from voice.errors import ConfigError

ENV_URL = "VOICE_LLM_URL"
ENV_MODEL = "VOICE_LLM_MODEL"
ENV_API_KEY = "VOICE_LLM_API_KEY"
ENV_HEADERS = "VOICE_LLM_HEADERS"
ENV_GGUF = "VOICE_LLM_GGUF"
ENV_CONTEXT_TOKENS = "VOICE_CONTEXT_TOKENS"


@dataclass(frozen=True)
class LlmConfig:
    """A remote server (``url`` and ``model``) or, with no ``url``, the embedded one (optional ``gguf``)."""

    url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    extra_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    gguf: Path | None = None
    context_tokens: int | None = None

    @property
    def embedded(self) -> bool:
        return self.url is None


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """The LLM flags, shared by every command that talks to a model."""
    group = parser.add_argument_group("LLM (flags win over the environment)")
    group.add_argument(
        "--llm-url",
        metavar="URL",
        help=f"OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (env {ENV_URL})",
    )
    group.add_argument("--llm-model", metavar="NAME", help=f"model name the server knows (env {ENV_MODEL})")
    group.add_argument(
        "--llm-gguf",
        metavar="FILE",
        help=f"GGUF for the embedded llama.cpp server used when no URL is given (env {ENV_GGUF})",
    )
    group.add_argument(
        "--context-tokens",
        metavar="N",
        help="the model's context window in tokens: a remote server's limit, or the embedded server's size "
        f"(env {ENV_CONTEXT_TOKENS})",
    )


def config_from_args(args: argparse.Namespace, environ: Mapping[str, str]) -> LlmConfig:
    return resolve_llm_config(
        args.llm_url, args.llm_model, args.llm_gguf, environ, context_tokens_flag=args.context_tokens
    )


def resolve_llm_config(
    url_flag: str | None,
    model_flag: str | None,
    gguf_flag: str | None,
    environ: Mapping[str, str],
    *,
    context_tokens_flag: str | None = None,
) -> LlmConfig:
    """Combine flags and environment; a flag for one kind of model overrides the other kind's variable."""
    env = {
        name: value.strip()
        for name, value in environ.items()
        if name.startswith("VOICE_LLM_") and value.strip()
    }
    url = url_flag or (None if gguf_flag else env.get(ENV_URL))
    gguf = gguf_flag or (None if url_flag else env.get(ENV_GGUF))
    model = model_flag or env.get(ENV_MODEL)
    if url and gguf:
        raise ConfigError(
            f"give an LLM URL or a GGUF to run locally, not both ({ENV_URL} and {ENV_GGUF} are both set)"
        )
    if url:
        _check_url(url)
        if not model:
            raise ConfigError(f"the LLM at {url} needs a model name: give --llm-model or set {ENV_MODEL}")
    return LlmConfig(
        url=url or None,
        model=model,
        api_key=env.get(ENV_API_KEY),
        extra_headers=_parse_headers(env.get(ENV_HEADERS)),
        gguf=Path(gguf).expanduser() if gguf else None,
        context_tokens=_parse_context_tokens(context_tokens_flag or environ.get(ENV_CONTEXT_TOKENS)),
    )


def _parse_context_tokens(text: str | None) -> int | None:
    if text is None or not text.strip():
        return None
    try:
        tokens = int(text)
    except ValueError:
        tokens = 0
    if tokens <= 0:
        raise ConfigError(
            f"the context window must be a whole number of tokens above 0, not {text.strip()!r}"
        )
    return tokens


def _check_url(url: str) -> None:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ConfigError(f"the LLM URL is not a URL: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError("the LLM URL must look like http://HOST:PORT/v1 (http or https)")
    if parsed.userinfo:
        raise ConfigError(f"the LLM URL must not carry credentials: put the key in {ENV_API_KEY}")


def _parse_headers(text: str | None) -> tuple[tuple[str, str], ...]:
    if text is None:
        return ()
    try:
        headers = json.loads(text)
    except ValueError:
        headers = None
    # The values may be secrets, so the message never repeats them.
    if not isinstance(headers, dict) or not all(
        isinstance(name, str) and isinstance(value, str) for name, value in headers.items()
    ):
        raise ConfigError(f"{ENV_HEADERS} must be a JSON object mapping header names to text values")
    return tuple(headers.items())
