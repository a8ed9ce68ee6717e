"""The `voice` commands README.md and docs/ show name a verb voice has, with flags that verb takes, and the
README's first block is what CI runs.

A reader pastes what the README shows; a verb renamed or a flag dropped must fail here, not in their terminal.
Placeholders (`FILE`, `N`) and required arguments a quoted name leaves out (`voice simulate`) are the
reader's to fill, so only verbs and flags are checked.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass

import pytest

from tests.support.paths import ROOT
from voice.cli import build_parser

SEARCHED = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SPAN = re.compile(r"`((?:[A-Z_]+=\S+ )*voice [^`]+)`")  # `voice chat --plain`, `VOICE_TOKEN=... voice kiosk`
SHELL_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
FLAG = re.compile(r"^--?[a-z][\w-]*")


@dataclass(frozen=True)
class Quoted:
    where: str
    command: str


def quoted_commands() -> list[Quoted]:
    """Every `voice ...` in backticks, and every line of a ```sh block that runs voice."""
    found = []
    for path in SEARCHED:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT)
        for match in SPAN.finditer(text):
            found.append(Quoted(f"{name}:{text.count(chr(10), 0, match.start()) + 1}", match.group(1)))
        for block in SHELL_BLOCK.finditer(text):
            first = text.count("\n", 0, block.start()) + 2
            for offset, line in enumerate(block.group(1).splitlines()):
                command = line.split(" #", 1)[0].strip()
                if command.startswith("voice "):
                    found.append(Quoted(f"{name}:{first + offset}", command))
    return found


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def what_is_wrong(command: str, parser: argparse.ArgumentParser) -> str | None:
    """Why ``command`` would not parse as voice parses it (verbs and flags only), or None."""
    words = shlex.split(command.replace("$(", "(").replace("[", " ").replace("]", " ").replace("...", " "))
    while words and "=" in words[0]:  # VOICE_TOKEN=... voice kiosk
        words.pop(0)
    words = words[1:]
    path = ["voice"]
    while words and not words[0].startswith("-") and (verbs := subcommands(parser)):
        if words[0] not in verbs:  # argparse takes the word in a verb's place as a verb
            return f"{' '.join(path)} has no verb {words[0]!r}"
        parser = verbs[words.pop(0)]
        path.append(parser.prog.split()[-1])
    if len(path) == 1 and words:
        return f"no verb in {command!r}"  # `voice ...` alone names the command, not a verb
    known = {option for action in parser._actions for option in action.option_strings}
    for word in words:
        flag = FLAG.match(word)
        if flag and flag.group(0) not in known:
            return f"{' '.join(path)} takes no {flag.group(0)}"
    return None


def test_the_docs_quote_voice_commands() -> None:
    verbs = {q.command.split("voice ", 1)[1].split()[0] for q in quoted_commands()}
    assert {"chat", "kiosk", "test", "demo", "config", "models", "doctor"} <= verbs


def test_every_quoted_voice_command_names_a_verb_and_flags_voice_has() -> None:
    parser = build_parser()
    wrong = [f"{q.where}: {why}" for q in quoted_commands() if (why := what_is_wrong(q.command, parser))]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("voice chatter", "has no verb 'chatter'"),
        ("voice chat --no-such-flag", "voice chat takes no --no-such-flag"),
        ("voice models pul NAME", "voice models has no verb 'pul'"),
        ("voice models pull NAME", None),
        ("voice config shw", "voice config has no verb 'shw'"),
        ("voice kiosk --audio none --prot 9000", "voice kiosk takes no --prot"),
    ],
)
def test_a_verb_or_flag_voice_lacks_is_caught(command: str, why: str | None) -> None:
    reason = what_is_wrong(command, build_parser())
    assert (reason is None) if why is None else (reason is not None and why in reason)


def test_the_readmes_first_block_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("  #", 1)[0].strip() for line in first.splitlines()]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert commands[0] == "bash scripts/install.sh"
    assert commands[-1] == "voice demo"
    assert [command for command in commands if command not in ci] == []
