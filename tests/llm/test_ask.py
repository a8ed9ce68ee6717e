"""`voice ask`: the reply streams to stdout; a failure is one line naming its code and a non-zero exit."""

from __future__ import annotations

import pytest

from tests.support.fault_llm import Exchange, FaultServer, delta_chunk, finish_chunk, replying
from voice.cli import main

reply = replying(delta_chunk("Paris"), delta_chunk(" is"), delta_chunk(" sunny."), finish_chunk())


def test_the_reply_streams_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    with FaultServer(reply) as server:
        code = main(["ask", "Weather in Paris?", "--llm-url", server.url, "--llm-model", "m"])
    assert code == 0
    assert capsys.readouterr().out == "Paris is sunny.\n"
    assert server.requests[0].json()["messages"][-1] == {"role": "user", "content": "Weather in Paris?"}


def test_a_failure_prints_one_line_naming_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    def unauthorized(exchange: Exchange) -> None:
        exchange.respond(401, {"error": {"message": "Incorrect API key", "code": "invalid_api_key"}})

    with FaultServer(unauthorized) as server:
        code = main(["ask", "Hello?", "--llm-url", server.url, "--llm-model", "m"])
    captured = capsys.readouterr()
    assert code != 0
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "unauthorized" in captured.err


def test_a_retriable_failure_before_any_text_is_retried(capsys: pytest.CaptureFixture[str]) -> None:
    def busy_then_fine(exchange: Exchange) -> None:
        if len(exchange.server_requests) == 1:
            exchange.respond(503, {"error": {"message": "busy"}})
        else:
            reply(exchange)

    with FaultServer(busy_then_fine) as server:
        code = main(["ask", "Weather in Paris?", "--llm-url", server.url, "--llm-model", "m"])
    assert code == 0
    assert capsys.readouterr().out == "Paris is sunny.\n"
    assert len(server.requests) == 2


def test_a_failure_after_text_was_shown_is_not_retried(capsys: pytest.CaptureFixture[str]) -> None:
    def breaks_mid_reply(exchange: Exchange) -> None:
        exchange.send_head()
        exchange.send_event(delta_chunk("Paris is"))
        exchange.reset()

    with FaultServer(breaks_mid_reply) as server:
        code = main(["ask", "Weather in Paris?", "--llm-url", server.url, "--llm-model", "m"])
    captured = capsys.readouterr()
    assert code != 0
    assert captured.out == "Paris is\n"
    assert "transport" in captured.err
    assert len(server.requests) == 1
