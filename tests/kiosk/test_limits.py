"""The rates a client's commands are held to, on a clock the test moves."""

from __future__ import annotations

from voice.engine.inputs import CancelReply, TextInput
from voice.kiosk.limits import (
    ALL_CLIENTS,
    FLOOD_MEMORY_S,
    REFUSALS,
    TYPING,
    CommandLimits,
    Flooders,
    TokenBucket,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_is_taken_then_one_a_second() -> None:
    clock = Clock()
    limits = CommandLimits(TokenBucket(ALL_CLIENTS, clock), clock)
    line = TextInput("Hello", None)
    assert [limits.admit(line) for _ in range(TYPING.burst)] == [None] * TYPING.burst
    refused = limits.admit(line)
    assert refused is not None
    assert refused.code == "rate_limited"
    assert refused.message == (
        "input.text over this client's limit (5 at once, then 1 a second): dropped; "
        "the next is taken in 1.0 s"
    )
    clock.now += 0.5
    assert limits.admit(line) is not None
    clock.now += 0.5
    assert limits.admit(line) is None
    assert limits.admit(CancelReply()) is None  # buttons have their own bucket


def test_all_clients_together_are_held_to_one_rate() -> None:
    clock = Clock()
    everyone = TokenBucket(ALL_CLIENTS, clock)
    clients = [CommandLimits(everyone, clock) for _ in range(ALL_CLIENTS.burst)]
    assert [client.admit(TextInput("Hi", None)) for client in clients] == [None] * ALL_CLIENTS.burst
    late = CommandLimits(everyone, clock).admit(TextInput("Hi", None))
    assert late is not None
    assert late.message.startswith("input.text over the limit for all clients together (20 at once, then 10")
    clock.now += 2 / ALL_CLIENTS.per_s
    assert CommandLimits(everyone, clock).admit(TextInput("Hi", None)) is None


def test_a_client_refused_too_often_is_flooding() -> None:
    clock = Clock()
    limits = CommandLimits(TokenBucket(ALL_CLIENTS, clock), clock)
    assert [limits.refused() for _ in range(REFUSALS.burst)] == [False] * REFUSALS.burst
    assert limits.refused()
    clock.now += 1 / REFUSALS.per_s  # one refusal a second is forgiven
    assert not limits.refused()


def test_a_flooder_coming_back_starts_with_one_token_for_a_minute() -> None:
    clock = Clock()
    flooders = Flooders(clock)
    flooders.closed("127.0.0.1")
    assert flooders.lately("127.0.0.1")
    assert not flooders.lately("192.0.2.7")
    back = CommandLimits(TokenBucket(ALL_CLIENTS, clock), clock, burst=not flooders.lately("127.0.0.1"))
    assert back.admit(TextInput("Hi", None)) is None
    assert back.admit(TextInput("Hi", None)) is not None  # no fresh burst
    clock.now += 1 / TYPING.per_s
    assert back.admit(TextInput("Hi", None)) is None  # the rate still holds
    clock.now += FLOOD_MEMORY_S
    assert not flooders.lately("127.0.0.1")
