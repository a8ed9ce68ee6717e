"""Moments the engine notices on its own clock, which no driver reports: it dispatches them to itself
through the transition table, so they name the phase changes they cause."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HoldPassed:
    """The user stayed silent through the hold after an early end: the reply held for it may play."""


@dataclass(frozen=True)
class ToolsOverdue:
    """The user moved on and a tool still runs past the limit: it is abandoned and the user answered."""
