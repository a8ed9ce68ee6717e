"""benchmarks/full_duplex.py's scorecard as markdown: FDB's four tasks beside FDB's published figures, then
the cut-ins and backchannels beside τ-voice's published selectivity, then the bystander categories (FDB
v1.5's background speech and talking to others, and cut-ins over them) per ``[turn] speaker`` setting
beside τ-voice's published S_ND and yield rate (each benchmark on other data)."""

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


BYSTANDER_CATEGORIES = ("background_speech", "talking_to_others", "bystander_cut_in", "all")


def median_p95(found: dict[str, Any], key: str, scale: float = 1.0) -> str:
    spread = found.get(key) or {}
    if not spread.get("n"):
        return "-"
    return f"{spread['median'] * scale:.0f} / {spread['p95'] * scale:.0f}"


def bystander_cells(found: dict[str, Any]) -> list[str]:
    said = f"{found['false_rejects']} / {found['user_said']}"
    behaviours = "/".join(str(found["behaviour"][name]) for name in ("respond", "stop", "resume", "continue"))
    return [
        cell(found["s_nd"]),
        cell(found["s_nd_without_pause"]),
        f"{cell(found['yield_rate'])} (n={found['yield_n']})" if found["yield_n"] else "-",
        said,
        str(found["cuts_by_bystander"]),
        str(found["answers_to_bystander"]),
        str(found["pauses_for_bystander"]),
        behaviours,
        median_p95(found, "cut_in_stop_ms"),
        median_p95(found, "answer_latency_s", 1000),
        f"{cell(found['user_words_kept'])} / {cell(found.get('user_words_kept_alone'))}",
        str(found["user_extra_words"]),
    ]


BYSTANDER_HEADER = (
    "S_ND ↑",
    "S_ND, a pause counted as a yield ↑",
    "Yield to the user's cut-ins ↑",
    "User not heard (false rejects) / said ↓",
    "Replies cut by the bystander ↓",
    "Answers to the bystander ↓",
    "Pauses for the bystander ↓",
    "FDB v1.5 behaviour respond/stop/resume/continue",
    "User's cut-in: reply silent after, median / p95 ms ↓",
    "User's request to its answer, median / p95 ms ↓",
    "User's words kept, in the run / of the clip alone ↑",
    "Words added to the user's requests ↓",
)


def bystander_table(after: dict[str, Any], published: Published) -> str:
    """One row per category and ``[turn] speaker`` setting, then τ-voice's published rows."""
    clock = "real time" if after["realtime"] else "virtual time"
    lines = [f"| ({clock}) | {' | '.join(BYSTANDER_HEADER)} |", "|---" * (len(BYSTANDER_HEADER) + 1) + "|"]
    for category in BYSTANDER_CATEGORIES:
        for speaker, by_category in after.get("bystanders", {}).items():
            found = by_category.get(category)
            if found is not None and found["n"]:
                label = f"{category}, speaker = {speaker} (n={found['n']})"
                lines.append(f"| {label} | {' | '.join(bystander_cells(found))} |")
    for model, figures in published.items():
        theirs = [cell(figures.get("s_nd")), "-", cell(figures.get("yield_rate"))] + ["-"] * 9
        lines.append(f"| τ-voice {model} (published, its own data) | {' | '.join(theirs)} |")
    return "\n".join(lines)


def table(
    after: dict[str, Any],
    before: dict[str, Any] | None,
    fdb: Published,
    tau_voice: Published,
    tau_voice_bystanders: Published | None = None,
) -> str:
    """The scorecard beside FDB's published figures, then beside τ-voice's (each on its own data), then
    the bystander categories if any ran."""
    tables = []
    if after["scorecard"]:  # not when only the bystander categories ran
        tables += [render(FDB_ROWS, after, before, fdb), render(TAU_VOICE_ROWS, after, before, tau_voice)]
    if after.get("bystanders"):
        tables.append(bystander_table(after, tau_voice_bystanders or {}))
    return "\n\n".join(tables)
