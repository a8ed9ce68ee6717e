"""How often clients may ask the kiosk for something: token buckets per client and for all of them.

Every command a client sends starts something every other client is told about (a transcript, a
new reply, a state), so one client's flood would be everyone's flood. A person typing or pressing
buttons stays far inside these rates; a command over them is dropped with a ``rate_limited`` error.
A client that came back after being closed for flooding does not get a fresh burst with each reconnect.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from voice.client_events import Failure
from voice.engine.inputs import TextInput
from voice.kiosk.protocol import Command

RATE_LIMITED = "rate_limited"


@dataclass(frozen=True)
class Rate:
    """``burst`` at once, then ``per_s`` a second."""

    burst: int
    per_s: float

    def describe(self) -> str:
        return f"{self.burst} at once, then {self.per_s:g} a second"


TYPING = Rate(5, 1.0)  # input.text: a person sends a line every few seconds at most
CONTROLS = Rate(10, 2.0)  # response.cancel, mic.mute/unmute, session.reset: button presses
ALL_CLIENTS = Rate(20, 10.0)  # every client's commands together: one conversation uses no more
REFUSALS = Rate(50, 1.0)  # commands refused for their rate before a client is closed as flooding
FLOOD_MEMORY_S = 60.0  # after a flooding close, new connections from that address start with one token


class TokenBucket:
    """Holds up to ``burst`` tokens, refilled at ``per_s``; a command takes one."""

    def __init__(
        self, rate: Rate, clock: Callable[[], float] = time.monotonic, tokens: float | None = None
    ) -> None:
        self.rate = rate
        self._clock = clock
        self._tokens = float(rate.burst if tokens is None else tokens)
        self._at = clock()

    def wait_s(self) -> float:
        """Seconds until a token is there: 0 when one is there now."""
        now = self._clock()
        self._tokens = min(self.rate.burst, self._tokens + (now - self._at) * self.rate.per_s)
        self._at = now
        return 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.rate.per_s

    def take(self) -> bool:
        """Take a token if one is there."""
        if self.wait_s() > 0:
            return False
        self._tokens -= 1
        return True


class CommandLimits:
    """One client's buckets, and the kiosk-wide one it shares with every other client.

    Without ``burst`` (its address flooded lately) each bucket starts with one token, not a full one.
    """

    def __init__(
        self, everyone: TokenBucket, clock: Callable[[], float] = time.monotonic, burst: bool = True
    ) -> None:
        start = None if burst else 1.0
        self._typing = TokenBucket(TYPING, clock, start)
        self._controls = TokenBucket(CONTROLS, clock, start)
        self._refusals = TokenBucket(REFUSALS, clock)
        self._everyone = everyone

    def admit(self, command: Command) -> Failure | None:
        """None if ``command`` may go on (its tokens taken); else the ``rate_limited`` error to send."""
        kind = "input.text" if isinstance(command, TextInput) else "a command"
        own = self._typing if isinstance(command, TextInput) else self._controls
        wait = own.wait_s()
        if wait > 0:
            limit = f"{kind} over this client's limit ({own.rate.describe()})"
        else:
            wait = self._everyone.wait_s()
            limit = f"{kind} over the limit for all clients together ({self._everyone.rate.describe()})"
        if wait > 0:
            return Failure(RATE_LIMITED, f"{limit}: dropped; the next is taken in {max(wait, 0.1):.1f} s")
        own.take()
        self._everyone.take()
        return None

    def refused(self) -> bool:
        """Count a refused command; True when the client has been refused too often (flooding)."""
        return not self._refusals.take()


class Flooders:
    """Addresses a client was closed from for flooding in the last ``FLOOD_MEMORY_S``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[str, float] = {}

    def closed(self, address: str) -> None:
        now = self._clock()
        self._until = {known: until for known, until in self._until.items() if until > now}
        self._until[address] = now + FLOOD_MEMORY_S

    def lately(self, address: str) -> bool:
        return self._until.get(address, 0.0) > self._clock()
