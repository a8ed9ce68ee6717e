"""benchmarks/full_duplex.py's scorecard as markdown: FDB's four tasks beside FDB's published figures, then
the cut-ins and backchannels beside τ-voice's published selectivity (both benchmarks on other data)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Published = dict[str, dict[str, float]]  # model -> figure -> value
# a row: its label, how to read its figure from a run's result, and the published figure's key (if any)
Row = tuple[str, Callable[[dict[str, Any]], str], str | None]
PLAIN, OPENING = "user_interruption", "opening_word_cut_in"


def cell(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def get(result: dict[str, Any], category: str, *keys: str) -> Any:
    value: Any = result["scorecard"].get(category)
    for key in keys:
        value = None if value is None else value.get(key)
    return value


def figure(category: str, *keys: str) -> Callable[[dict[str, Any]], str]:
    return lambda result: cell(get(result, category, *keys))


def pair(category: str, key: str) -> Callable[[dict[str, Any]], str]:
    """A spread's median / p95, whole."""

    def read(result: dict[str, Any]) -> str:
        median, p95 = get(result, category, key, "median"), get(result, category, key, "p95")
        return "-" if median is None else f"{median:.0f} / {p95:.0f}"

    return read


def both(key: str) -> Callable[[dict[str, Any]], str]:
    """A cut-in figure for plain cut-ins / those opening with a listener's word."""
    return lambda result: f"{cell(get(result, PLAIN, key))} / {cell(get(result, OPENING, key))}"


def selectivity(key: str) -> Callable[[dict[str, Any]], str]:
    """A τ-voice figure over the whole run (a tree from before them has none)."""
    return lambda result: cell(result.get("tau_voice", {}).get(key))


FDB_ROWS: tuple[Row, ...] = (
    ("Pause handling TOR ↓", figure("pause_handling", "tor"), "pause_handling_tor"),
    (
        "Backchannel TOR ↓ (FDB: the model's own backchannels)",
        figure("backchannel", "tor"),
        "backchannel_tor",
    ),
    ("Backchannel: the reply went on ↑ (ours)", figure("backchannel", "went_on"), None),
    ("Backchannel gap, median / p95 ms (ours)", pair("backchannel", "gap_ms"), None),
    ("Smooth turn-taking TOR ↑", figure("smooth_turn_taking", "tor"), "smooth_turn_taking_tor"),
    (
        "Smooth turn-taking latency, mean s ↓",
        figure("smooth_turn_taking", "latency_s", "mean"),
        "smooth_turn_taking_latency_s",
    ),
    ("User interruption TOR ↑", figure(PLAIN, "tor"), "user_interruption_tor"),
    (
        "User interruption latency, mean s ↓",
        figure(PLAIN, "latency_s", "mean"),
        "user_interruption_latency_s",
    ),
    (
        "User interruption answered ↑ (ours; FDB: GPT-4o 0-5)",
        figure(PLAIN, "answered"),
        "user_interruption_gpt4o",
    ),
    ("Stop latency, median / p95 ms (ours)", pair(PLAIN, "stop_ms"), None),
)
TAU_VOICE_ROWS: tuple[Row, ...] = (
    ("Yield rate R_Y ↑, every cut-in (τ-voice: stopped within 2 s)", selectivity("yield_rate"), "yield_rate"),
    ("S_BC ↑, backchannels talked through (τ-voice: not stopped within 1 s)", selectivity("s_bc"), "s_bc"),
    ("Yield rate, plain / opening with a listener's word (ours)", both("yield_rate"), None),
    ("Words kept ↑, mean, plain / opening (ours)", both("words_kept"), None),
    ("Words kept of the clip alone, same whisper, plain / opening (ours)", both("words_kept_alone"), None),
    ("Extra words ↓, total, plain / opening (ours)", both("extra_words"), None),
    ("Silent within 300 ms ↑, plain / opening (ours)", both("silent_within_300ms"), None),
    ("Silent until the answer ↑, plain / opening (ours)", both("silent_until_answer"), None),
    ("Resumed into the cut-in ↓, count, plain / opening (ours)", both("resumed_into_cut_in"), None),
    ("Stop latency, opening, median / p95 ms (ours)", pair(OPENING, "stop_ms"), None),
)


def render(
    rows: tuple[Row, ...], after: dict[str, Any], before: dict[str, Any] | None, published: Published
) -> str:
    """One table: a row per figure, this run's column(s), then each published model's."""
    clock = "real time" if after["realtime"] else "virtual time"
    ours = [f"before ({clock})", f"after ({clock})"] if before else [f"voice ({clock})"]
    columns = [*ours, *published]
    runs = [after] if before is None else [before, after]
    lines = [f"| | {' | '.join(columns)} |", "|---" * (len(columns) + 1) + "|"]
    for label, read, key in rows:
        theirs = [cell(figures[key]) if key else "-" for figures in published.values()]
        lines.append(f"| {label} | {' | '.join([read(run) for run in runs] + theirs)} |")
    return "\n".join(lines)


def table(after: dict[str, Any], before: dict[str, Any] | None, fdb: Published, tau_voice: Published) -> str:
    """The scorecard beside FDB's published figures, then beside τ-voice's (each on its own data)."""
    return f"{render(FDB_ROWS, after, before, fdb)}\n\n{render(TAU_VOICE_ROWS, after, before, tau_voice)}"
