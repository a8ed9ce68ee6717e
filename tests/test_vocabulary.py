"""One vocabulary: a name a newcomer meets means one thing wherever it is imported from."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import voice

PACKAGE = Path(voice.__file__).parent


def defined_names(tree: ast.Module) -> list[str]:
    """Classes and type aliases (capitalised names bound at module level) a module defines."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id[:1].isupper() and not target.id.isupper():
                names.append(target.id)
    return names


def test_no_class_or_type_name_is_defined_twice_in_voice() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in defined_names(ast.parse(path.read_text(encoding="utf-8"))):
            where[name].append(str(path.relative_to(PACKAGE.parent)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert twice == {}


def test_each_event_set_is_named_by_its_direction() -> None:
    for module in (
        "engine/inputs.py",
        "engine/actions.py",
        "client_events.py",
        "conversation/log_records.py",
    ):
        assert (PACKAGE / module).is_file(), module
    assert not list(PACKAGE.rglob("events.py")), "an events.py says nothing of who reads it"
