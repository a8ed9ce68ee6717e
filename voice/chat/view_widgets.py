"""What the terminal view is drawn with: the status bar (state, mic meter, voice light) and the dialogue."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

LABELS = {
    "listening": "Listening",
    "user_speaking": "Hearing you",
    "thinking": "Thinking",
    "speaking": "Speaking",
    "paused": "Paused",
    "muted": "Muted",
    "stopping": "Stopping",
}
COLOURS = {  # the kiosk page's colours for the same states
    "listening": "#5eead4",
    "user_speaking": "#fcd34d",
    "thinking": "#c4b5fd",
    "speaking": "#7dd3fc",
    "paused": "#fdba74",
    "muted": "#fca5a5",
    "stopping": "#94a3b8",
}
METER_CELLS = 20
METER_FLOOR_DBFS = -60.0  # a quiet room sits near -60 dBFS; speech close to a mic reaches -20
ENTRIES_KEPT = 200  # a long chat scrolls on; the session log keeps everything

WHO_STYLE = {"you": "bold #fcd34d", "assistant": "bold #7dd3fc", "tool": "#c4b5fd", "error": "bold red"}


def meter(dbfs: float | None) -> Text:
    """A bar of METER_CELLS from METER_FLOOR_DBFS to 0 dBFS, green, then amber, then red near clipping."""
    bar = Text()
    filled = 0 if dbfs is None else round(METER_CELLS * (1 - max(dbfs, METER_FLOOR_DBFS) / METER_FLOOR_DBFS))
    for cell in range(METER_CELLS):
        colour = "green" if cell < METER_CELLS * 0.6 else "yellow" if cell < METER_CELLS * 0.85 else "red"
        bar.append("█" if cell < filled else "·", style=colour if cell < filled else "grey35")
    return bar


class StatusBar(Static):
    """One line: the state as a coloured light and word, the mic's level and the VAD's voice light."""

    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self) -> None:
        super().__init__(id="status")
        self.state = "listening"
        self.dbfs: float | None = None
        self.voice = False
        self.muted = False
        self._shown: Text | None = None

    def show(self, state: str | None = None, dbfs: float | None = None, voice: bool | None = None) -> None:
        if state is not None:
            self.state = state
        if dbfs is not None:
            self.dbfs = dbfs
        if voice is not None:
            self.voice = voice
        line = self.line()
        if line != self._shown:  # a quiet room reads the same level ten times a second
            self._shown = line
            self.update(line)

    def line(self) -> Text:
        colour = COLOURS.get(self.state, "white")
        text = Text.assemble(("● ", colour), (f"{LABELS.get(self.state, self.state):<12}", f"bold {colour}"))
        text.append("   mic ")
        if self.muted:
            text.append("muted".ljust(METER_CELLS), style="bold #fca5a5")
        else:
            text.append_text(meter(self.dbfs))
        level = "" if self.muted else "  --- dB" if self.dbfs is None else f" {self.dbfs:4.0f} dB"
        text.append(f"{level:>8}", style="grey70")
        text.append("   ● voice", style="bold green" if self.voice and not self.muted else "grey35")
        return text


def entry(who: str, body: Text) -> Table:
    """A dialogue line: who in a narrow column, what was said wrapping beside it."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=9, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(who, style=WHO_STYLE.get(who, "grey70")), body)
    return grid


CUT_MARK = "‖"  # where the reply was cut, for terminals that draw no strikethrough


def reply_text(heard: str, unheard: str = "", waiting: bool = False) -> Text:
    """The reply as heard; words generated but never heard struck through, as on the kiosk page."""
    if waiting and not heard:
        return Text("…", style="grey50")
    text = Text(heard)
    if unheard:
        text.append(f" {CUT_MARK} " if heard else f"{CUT_MARK} ", style="bold #fdba74")
        text.append(unheard, style="strike grey50")
    return text


def partial_text(text: str) -> Text:
    """Your words while you say them: provisional, so dim, as the kiosk page draws them."""
    return Text(text, style="italic grey62")


class Line(Static):
    """One line of the dialogue; ``who`` and ``body`` are what it shows (tests read them)."""

    def __init__(self, who: str, body: Text, classes: str = "") -> None:
        super().__init__(entry(who, body), classes=classes)
        self.who = who
        self.body = body

    def show(self, body: Text) -> None:
        self.body = body
        self.update(entry(self.who, body))


class Dialogue(VerticalScroll):
    """The conversation as it is shown: one line widget each, the newest in view, the oldest let go."""

    DEFAULT_CSS = """
    Dialogue { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    Dialogue Line.turn { color: $text-muted; margin-bottom: 1; }
    Dialogue Line.notice { color: $text-muted; }
    Dialogue Line.partial { color: $text-muted; }
    """

    def add(self, line: Line) -> Line:
        self.mount(line)
        extra = len(self.children) - ENTRIES_KEPT
        for old in list(self.children)[: max(0, extra)]:
            old.remove()
        self.scroll_end(animate=False)
        return line
