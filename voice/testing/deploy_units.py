"""The command a systemd unit in deploy/ runs, read from the file as systemd would read it.

Only what the units use: ``Environment=`` lines (later ones win, an ``EnvironmentFile`` is given as
``overrides``), ``${NAME}`` and ``$NAME`` in ``ExecStart``, the instance specifier ``%i`` and lines
continued with a backslash. ``replacements`` turn the box's paths, addresses and ports into a test's.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


@dataclass(frozen=True)
class UnitCommand:
    argv: list[str]
    environment: dict[str, str]


def unit_lines(text: str) -> list[str]:
    """The unit's settings, one per line: continuations joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    lines = (line.strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith(("#", ";"))]


def unit_text(name: str, replacements: dict[str, str], instance: str | None = None) -> str:
    text = (DEPLOY / name).read_text(encoding="utf-8")
    for old, new in replacements.items():
        text = text.replace(old, new)
    if instance is not None:
        text = text.replace("%i", instance)
    return text.replace("%%", "%")


def settings(text: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in unit_lines(text) if line.split("=", 1)[0].strip() == key]


def unit_command(
    name: str,
    replacements: dict[str, str],
    overrides: dict[str, str] | None = None,
    instance: str | None = None,
) -> UnitCommand:
    """``ExecStart`` of ``deploy/NAME`` as argv, and the variables its ``Environment=`` lines set."""
    text = unit_text(name, replacements, instance)
    environment: dict[str, str] = {}
    for assignments in settings(text, "Environment"):
        for assignment in shlex.split(assignments):
            variable, value = assignment.split("=", 1)
            environment[variable] = value
    environment.update(overrides or {})
    [exec_start] = settings(text, "ExecStart")

    def expand(found: re.Match[str]) -> str:
        variable = found.group(1) or found.group(2)
        if variable not in environment:
            raise AssertionError(f"{name}: ExecStart uses ${variable}, which no Environment= line sets")
        return environment[variable]

    expanded = re.sub(r"\$\{(\w+)\}|\$(\w+)", expand, exec_start)
    return UnitCommand(shlex.split(expanded), environment)
