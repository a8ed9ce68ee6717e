"""How long to wait for a speech server: to connect, and between any two reads."""

from __future__ import annotations

from dataclasses import dataclass

from voice.remote.errors import CONNECT_TIMEOUT_S, IDLE_TIMEOUT_S


@dataclass(frozen=True)
class Limits:
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    idle_timeout_s: float = IDLE_TIMEOUT_S
