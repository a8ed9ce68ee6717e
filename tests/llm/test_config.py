"""Where the LLM is: flags win over the environment; no URL means the embedded server."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from voice.config.llm import LlmConfig, add_llm_arguments, config_from_args, resolve_llm_config
from voice.errors import ConfigError

KEY = "sk-live-do-not-print"


def test_nothing_configured_means_the_embedded_server() -> None:
    config = resolve_llm_config(None, None, None, {})
    assert config == LlmConfig()
    assert config.embedded


def test_environment_configures_a_remote_server() -> None:
    environ = {
        "VOICE_LLM_URL": "https://api.openai.com/v1",
        "VOICE_LLM_MODEL": "gpt-4o-mini",
        "VOICE_LLM_API_KEY": KEY,
        "VOICE_LLM_HEADERS": '{"OpenAI-Organization": "org-1"}',
    }
    config = resolve_llm_config(None, None, None, environ)
    assert config == LlmConfig(
        url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        api_key=KEY,
        extra_headers=(("OpenAI-Organization", "org-1"),),
    )
    assert not config.embedded
    assert KEY not in repr(config)


def test_flags_win_over_the_environment() -> None:
    environ = {"VOICE_LLM_URL": "http://elsewhere:1/v1", "VOICE_LLM_MODEL": "other"}
    config = resolve_llm_config("http://127.0.0.1:8080/v1", "local", None, environ)
    assert (config.url, config.model) == ("http://127.0.0.1:8080/v1", "local")


def test_a_gguf_flag_overrides_a_url_from_the_environment() -> None:
    config = resolve_llm_config(None, None, "~/models/tiny.gguf", {"VOICE_LLM_URL": "http://host:1/v1"})
    assert config.embedded
    assert config.gguf == Path("~/models/tiny.gguf").expanduser()


def test_a_url_flag_overrides_a_gguf_from_the_environment() -> None:
    config = resolve_llm_config("http://host:1/v1", "m", None, {"VOICE_LLM_GGUF": "/models/tiny.gguf"})
    assert (config.url, config.gguf) == ("http://host:1/v1", None)


@pytest.mark.parametrize(
    ("url_flag", "model_flag", "gguf_flag", "environ", "complaint"),
    [
        ("http://host:1/v1", None, None, {}, "needs a model name"),
        ("ftp://host/v1", "m", None, {}, "http or https"),
        ("http://user:pw@host/v1", "m", None, {}, "must not carry credentials"),
        (
            None,
            None,
            None,
            {"VOICE_LLM_URL": "http://h/v1", "VOICE_LLM_MODEL": "m", "VOICE_LLM_GGUF": "x"},
            "not both",
        ),
        (None, None, None, {"VOICE_LLM_HEADERS": '{"Authorization": 7}'}, "JSON object"),
    ],
)
def test_unusable_settings_are_one_line_config_errors(
    url_flag: str | None,
    model_flag: str | None,
    gguf_flag: str | None,
    environ: dict[str, str],
    complaint: str,
) -> None:
    with pytest.raises(ConfigError, match=complaint) as raised:
        resolve_llm_config(url_flag, model_flag, gguf_flag, environ)
    assert "\n" not in str(raised.value)
    assert "pw" not in str(raised.value)


def test_the_shared_flags_parse_into_a_config() -> None:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    args = parser.parse_args(["--llm-url", "http://127.0.0.1:11434/v1", "--llm-model", "llama3.2"])
    assert config_from_args(args, {}) == LlmConfig(url="http://127.0.0.1:11434/v1", model="llama3.2")


def parse(*flags: str, environ: dict[str, str] | None = None) -> LlmConfig:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    return config_from_args(parser.parse_args(list(flags)), environ or {})


def test_the_context_window_comes_from_the_flag_or_the_environment() -> None:
    remote = ("--llm-url", "http://127.0.0.1:11434/v1", "--llm-model", "llama3.2")
    assert parse(*remote).context_tokens is None
    assert parse(*remote, "--context-tokens", "8192").context_tokens == 8192
    assert parse(*remote, environ={"VOICE_CONTEXT_TOKENS": "32768"}).context_tokens == 32768
    flag_wins = parse(*remote, "--context-tokens", "8192", environ={"VOICE_CONTEXT_TOKENS": "32768"})
    assert flag_wins.context_tokens == 8192
    assert parse("--context-tokens", "4096").context_tokens == 4096  # the embedded server's size


@pytest.mark.parametrize("value", ["0", "-5", "lots", "4k"])
def test_a_context_window_that_is_not_a_positive_number_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match="whole number of tokens"):
        parse("--context-tokens", value)
