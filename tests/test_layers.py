"""Imports run one way: down the layers of docs/architecture.md §2, with no loop among voice/'s folders, tests
through tests/support only, benchmarks through voice's public names only."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "voice"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Back arrows whose fix waits for a file someone else is changing; each says where it goes. The test fails
# when one is fixed and still listed, so the list only shrinks.
WAITING: set[tuple[str, str]] = set()


def layers() -> dict[str, int]:
    """Each package or top-level module's layer, from the numbered list in docs/architecture.md §2."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    listed = text.split("<!-- layers, bottom to top", 1)[1].split("<!-- end of layers -->", 1)[0]
    found: dict[str, int] = {}
    for number, names in re.findall(r"^(\d+)\. (.*?):", listed, re.MULTILINE):
        for name in re.findall(r"`([^`]+)`", names):
            found[name] = int(number)
    return found


def part_of(path: Path) -> str:
    """The name a module is listed under: its package, or itself if it sits at voice/'s top."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def imported(tree: ast.Module) -> Iterator[str]:
    """Every module an import statement names, at any depth (a function's lazy import counts too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def arrows_up(path: Path, source: str, layer: dict[str, int]) -> set[tuple[str, str]]:
    """(the module, the part above it) for each import in ``source`` that runs up the layers."""
    here = part_of(path)
    arrows = set()
    for module in imported(ast.parse(source)):
        parts = module.split(".")
        if parts[0] == "voice" and len(parts) > 1 and parts[1] != here and layer[parts[1]] > layer[here]:
            arrows.add((str(path.relative_to(PACKAGE)), parts[1]))
    return arrows


def back_arrows() -> set[tuple[str, str]]:
    layer = layers()
    arrows: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != PACKAGE / "__init__.py":
            arrows |= arrows_up(path, path.read_text(encoding="utf-8"), layer)
    return arrows


def folder_graph() -> dict[str, set[str]]:
    """Each package or top-level module of voice/, and the others its modules import (at any depth)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "__init__.py":
            continue
        here = part_of(path)
        reached = graph.setdefault(here, set())
        for module in imported(ast.parse(path.read_text(encoding="utf-8"))):
            parts = module.split(".")
            if parts[0] == "voice" and len(parts) > 1 and parts[1] != here:
                reached.add(parts[1])
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every folder ``start`` reaches through one import or a chain of them."""
    seen: set[str] = set()
    waiting = list(graph.get(start, ()))
    while waiting:
        folder = waiting.pop()
        if folder not in seen:
            seen.add(folder)
            waiting.extend(graph.get(folder, ()))
    return seen


def loops(graph: dict[str, set[str]]) -> list[str]:
    """Each pair of folders that reach each other, as "a <-> b": the folders of one knot pair up."""
    reach = {folder: reachable(graph, folder) for folder in graph}
    return [
        f"{first} <-> {second}"
        for first in sorted(graph)
        for second in sorted(reach[first])
        if first < second and first in reach.get(second, set())
    ]


def test_every_package_has_a_layer() -> None:
    listed = set(layers())
    present = {part_of(path) for path in PACKAGE.rglob("*.py") if path != PACKAGE / "__init__.py"}
    assert present - listed == set(), "a package docs/architecture.md §2 does not place"
    assert listed - present == set(), "a layer names a package that is gone"


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert back_arrows() == WAITING


def test_no_folder_reaches_a_folder_that_reaches_it_back() -> None:
    assert loops(folder_graph()) == []


# `python -m voice` is the `voice` command: the one import that stays within its layer.
BESIDE = {("__main__", "cli")}


def drawn_layers(graph: dict[str, set[str]], layer: dict[str, int]) -> dict[str, int]:
    """The layer each folder's imports put it on: one above the highest it imports (1 if it imports none)."""
    return {
        folder: max(
            ((layer[other] if (folder, other) in BESIDE else layer[other] + 1) for other in reached),
            default=1,
        )
        for folder, reached in graph.items()
    }


def test_each_folder_is_listed_on_the_layer_its_imports_put_it() -> None:
    layer = layers()
    drawn = drawn_layers(folder_graph(), layer)
    assert {folder: n for folder, n in drawn.items() if n != layer[folder]} == {}, (
        "§2's list, as drawn from imports"
    )


def test_the_folder_check_finds_a_knot_through_a_chain_and_passes_a_graph_that_runs_one_way() -> None:
    knot = {"asr": {"config"}, "config": {"speech_backends"}, "speech_backends": {"asr"}, "cli": {"asr"}}
    assert loops(knot) == ["asr <-> config", "asr <-> speech_backends", "config <-> speech_backends"]
    knot["speech_backends"] = set()
    assert loops(knot) == []
    listed = {"speech_backends": 1, "config": 2, "asr": 4, "cli": 5}
    assert drawn_layers(knot, listed) == {"speech_backends": 1, "config": 2, "asr": 3, "cli": 5}


def test_the_check_sees_an_arrow_up_even_inside_a_function_and_lets_the_cli_read_the_config() -> None:
    layer = layers()
    items, ask = PACKAGE / "conversation" / "items.py", PACKAGE / "cli" / "ask.py"
    lazy = "def f() -> None:\n    from voice.engine.engine import Engine\n"
    assert arrows_up(items, lazy, layer) == {("conversation/items.py", "engine")}
    assert arrows_up(ask, "from voice.config.settings import load_settings\n", layer) == set()
    assert arrows_up(PACKAGE / "llm" / "port.py", "import voice.config.settings\n", layer) == {
        ("llm/port.py", "config")
    }


def test_a_test_imports_no_other_test_module() -> None:
    """Shared stand-ins live in tests/support (or voice.testing), never in a test or a conftest."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for module in imported(ast.parse(path.read_text(encoding="utf-8")))
        if module.startswith("tests.") and not module.startswith("tests.support")
    ]
    assert wrong == []


def test_a_benchmark_imports_nothing_from_tests_and_reads_no_private_attribute() -> None:
    wrong = []
    for path in sorted((ROOT / "benchmarks").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        wrong += [f"{where} imports {m}" for m in imported(tree) if m == "tests" or m.startswith("tests.")]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                wrong.append(f"{where}:{node.lineno} reads {ast.unparse(node)}")
    assert wrong == []


# Where a test patches instead of handing a stand-in in (docs/architecture.md §6): the operating system, and
# places that offer no seam yet. The test below fails on a patch not listed here, and on one listed but gone.
PATCHED = {
    ("tests/conversation/test_session_log.py", "os, 'fsync'"),
    ("tests/config/test_bad_files.py", "Path, 'open'"),
    ("tests/audio/test_sink_input.py", "sys, 'meta_path'"),
    ("tests/config/test_speech_models.py", "f'{module}.load_speech_models'"),
    ("tests/remote/test_wiring.py", "f'{module}.load_speech_models'"),
    ("tests/models/test_commands.py", "resolve, 'load_catalog'"),
    ("tests/remote/test_cancel.py", "WyomingConnection, 'receive'"),
}


def patch_target(node: ast.AST) -> str | None:
    """What a ``monkeypatch.setattr(...)`` or ``mock.patch(...)`` call replaces, or None if it is neither."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    called = ast.unparse(node.func)
    if called not in ("monkeypatch.setattr", "mock.patch", "unittest.mock.patch"):
        return None
    return ", ".join(ast.unparse(arg) for arg in node.args[:-1] or node.args)


def test_tests_patch_only_where_the_architecture_says() -> None:
    patched = set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            target = patch_target(node)
            if target is not None:
                patched.add((str(path.relative_to(ROOT)), target))
    assert patched == PATCHED
