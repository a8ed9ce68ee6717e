"""The engine's state diagram, drawn from its transition table, for docs/architecture.md.

``python -m voice.engine.diagram docs/architecture.md`` rewrites the diagram between the markers there;
a test fails while the file's diagram differs from the table's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from voice.engine.engine import TRANSITIONS
from voice.engine.phases import Phase, Transition

BEGIN = "<!-- state diagram: generated from the engine's table by python -m voice.engine.diagram -->"
END = "<!-- end of state diagram -->"


def state_diagram(transitions: dict[tuple[Phase, type], Transition] = TRANSITIONS) -> str:
    """Mermaid: an arrow for each pair of phases the table moves between, labelled with the events."""
    order = list(Phase)
    events: dict[tuple[Phase, Phase], list[str]] = {}
    for (start, kind), transition in transitions.items():
        for end in transition.to:
            names = events.setdefault((start, end), [])
            if kind.__name__ not in names:
                names.append(kind.__name__)
    lines = ["```mermaid", "stateDiagram-v2", f"    [*] --> {Phase.LISTENING.value}"]
    for start, end in sorted(events, key=lambda pair: (order.index(pair[0]), order.index(pair[1]))):
        lines.append(f"    {start.value} --> {end.value}: {', '.join(events[start, end])}")
    lines.append("```")
    return "\n".join(lines)


def with_diagram(document: str, diagram: str) -> str:
    """``document`` with what stands between the markers replaced by ``diagram``."""
    head, marker, rest = document.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not marker or not end:
        raise ValueError(f"the markers {BEGIN!r} and {END!r} are not both there")
    return f"{head}{BEGIN}\n{diagram}\n{END}{tail}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m voice.engine.diagram DOC.md (rewrites its state diagram)", file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        path.write_text(with_diagram(path.read_text(encoding="utf-8"), state_diagram()), encoding="utf-8")
    except (OSError, ValueError) as exc:
        print(f"voice: error: {path}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
