"""Benchmark commands the docs quote name a script that is there, in a mode it has; a script is one question.

benchmarks/README.md lists the questions, one script each; a script that measures its question more than one
way takes a mode (an argparse sub-command), and a command quoted without it, or with a mode the script
lacks, fails when a reader pastes it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

BENCHMARKS = ROOT / "benchmarks"
SEARCHED = (
    ROOT / "README.md",
    *sorted(BENCHMARKS.rglob("*.md")),
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "deploy").rglob("*")),
    *sorted((ROOT / "tests").rglob("*.py")),
    *sorted((ROOT / "voice").rglob("*.py")),
    *sorted(BENCHMARKS.rglob("*.py")),
)
SKIPPED = {Path(__file__).resolve()}  # its docstring's words are no commands
PATH = re.compile(r"(?<![\w/])benchmarks/([a-z_][\w/]*\.py)")  # not tests/benchmarks/, not NAME.py
OPTIONAL = {"memray"}  # device_soak --memray: installed by whoever asks for it, not a dependency
COMMAND = re.compile(r"`(?:PYTHONPATH=\S+ )?python benchmarks/(\w+)\.py([^`]*)`")


def scripts() -> list[str]:
    """The benchmark scripts: benchmarks/*.py, each run by hand."""
    return sorted(path.stem for path in BENCHMARKS.glob("*.py"))


def modes(script: str) -> set[str]:
    """The sub-commands ``script`` defines (``modes.add_parser("room", ...)``); none without modes."""
    tree = ast.parse((BENCHMARKS / f"{script}.py").read_text(encoding="utf-8"))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_parser"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def quoted_commands() -> list[tuple[str, str, str]]:
    """Every ``python benchmarks/NAME.py ...`` in backticks: where, the script and the rest of the command."""
    found = []
    for path in SEARCHED:
        if path.is_file() and path.resolve() not in SKIPPED and path.suffix in {".md", ".py", ".service", ""}:
            text = path.read_text(encoding="utf-8", errors="replace")
            for match in COMMAND.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1), match.group(2)))
    return found


def retired() -> set[str]:
    """Scripts whose question is decided: figures and method in benchmarks/README.md, "(was NAME.py)"."""
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"^### .*\(was (\w+\.py)\)$", readme, re.MULTILINE))


def test_every_benchmark_path_named_in_the_tree_is_there_or_retired_with_its_figures() -> None:
    # a comment beside a figure may still name the script that took it, once the figure is kept in the README
    kept = retired()
    missing = []
    for path in SEARCHED:
        if path.is_file() and path.resolve() not in SKIPPED:
            text = path.read_text(encoding="utf-8", errors="replace")
            for match in PATH.finditer(text):
                if not (BENCHMARKS / match.group(1)).is_file() and match.group(1) not in kept:
                    line = text.count("\n", 0, match.start()) + 1
                    missing.append(f"{path.relative_to(ROOT)}:{line}: benchmarks/{match.group(1)}")
    assert not missing, "\n".join(missing)


def test_no_command_quoted_runs_a_script_that_is_not_there() -> None:
    named = [(where, name) for where, name, _ in quoted_commands() if not name.isupper()]  # not NAME.py
    gone = [f"{where}: benchmarks/{name}.py" for where, name in named if name not in scripts()]
    assert not gone, "\n".join(gone)


def test_the_docs_quote_benchmark_commands() -> None:
    quoted = {script for _, script, _ in quoted_commands()}
    assert {"bars", "barge_in", "voice_to_voice", "idle", "eagerness"} <= quoted


@pytest.mark.parametrize("script", scripts())
def test_a_quoted_command_names_a_mode_its_script_has(script: str) -> None:
    has = modes(script)
    wrong = []
    for where, name, rest in quoted_commands():
        if name != script:
            continue
        first = rest.split()[0] if rest.split() else ""
        asked = set() if first.startswith(("-", "[")) or not first else set(first.split("|"))
        if has and not asked:
            wrong.append(f"{where}: {script}.py needs one of {sorted(has)}")
        elif asked - has:
            wrong.append(f"{where}: {script}.py has no mode {sorted(asked - has)}")
    assert not wrong, "\n".join(wrong)


def test_benchmarks_readme_lists_each_script_as_one_question() -> None:
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    questions = readme.split("## The questions", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"`python benchmarks/(\w+)\.py", questions)
    assert sorted(listed) == scripts(), "each script once in the list of questions, and nothing else"
    for script in scripts():
        assert f"\n## {script}.py: " in readme, f"benchmarks/README.md has no section for {script}.py"


@pytest.mark.parametrize("script", scripts())
def test_every_module_a_script_imports_is_there_also_the_ones_a_mode_imports_late(script: str) -> None:
    """A script run from benchmarks/ finds its helpers there (``from cases.x import y``); an import moved away
    and left behind in one mode's function fails only when that mode runs, minutes in."""
    tree = ast.parse((BENCHMARKS / f"{script}.py").read_text(encoding="utf-8"))
    names = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    sys.path.insert(0, str(BENCHMARKS))
    try:
        missing = [name for name in sorted(names - OPTIONAL) if not findable(name)]
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert not missing, f"{script}.py imports what is not there: {missing}"


def findable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False
