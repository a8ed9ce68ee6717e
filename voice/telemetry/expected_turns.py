"""How soon a turn can end under each eagerness, given what the speech models cost on this machine (pure).

How the engine ends a turn (docs/architecture.md §2, voice/engine/utterances.py, pause_ends.py, hold.py):
after a short pause (200 ms, or HIGH_PAUSE_MS under ``high``) it asks whisper and Smart Turn at once, on
their own workers, about the utterance so far; if both are back and call the turn finished before the VAD's
long silence (600 ms after the last word), the turn ends there and its request goes out; otherwise the long
silence ends it and the request waits for whisper's transcript of the pause's offer. ``low`` never ends at
the pause, and asks whisper alone there (engine.py drops Smart Turn's judgement); ``auto`` sends the
request at once but plays the reply only after the hold (START_MS after the last word at first, adapting
to the speaker); ``high`` plays it as soon as its audio is ready.

So an early end is only worth its risk (answering into a pause) while the decision beats the long silence,
and ``high`` is for answers sooner than that silence: its first audio (before the LLM's time) under it.
The LLM's time to its first words is the user's own (their server or the embedded model) and is left out:
every figure is "plus the LLM".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from voice.audio.vad import DEFAULT_QUIET
from voice.engine.hold import EAGERNESS, HIGH_PAUSE_MS, START_MS, Eagerness

LONG_SILENCE_MS = DEFAULT_QUIET.end_silence_ms
SHORT_PAUSE_MS = DEFAULT_QUIET.speculate_ms or LONG_SILENCE_MS


@dataclass(frozen=True)
class Costs:
    """Milliseconds each model took here (medians), and what the advice may suggest.

    ``whisper_beside_ms`` and ``decision_ms``: whisper's transcript, and both answers, when whisper and
    Smart Turn are asked together as the engine asks them (they share the cores).
    """

    whisper_ms: float
    smart_turn_ms: float
    whisper_beside_ms: float
    decision_ms: float
    first_audio_ms: float  # piper's (or the voice server's) audio of a reply's first chunk
    asr: str = "whisper"  # what hears the user, for the advice: a local model's name or a server's URL
    asr_is_server: bool = False
    smaller_asr: str | None = None  # a smaller local whisper model to suggest, if there is one


@dataclass(frozen=True)
class Expected:
    """What one eagerness gives on this machine, in ms after the user's last word.

    ``request_ms``: the LLM is asked; ``first_audio_ms``: the reply's first audio plays at the earliest
    (an LLM that answered at once); ``ends_early``: a turn can end at the short pause at all.
    """

    eagerness: str
    ends_early: bool
    request_ms: int
    first_audio_ms: int
    warning: str | None = None


def expected(costs: Costs) -> dict[str, Expected]:
    """Each eagerness's figures and, where its path is too slow for what the setting promises, a warning
    saying what to change."""
    low = _figures(Eagerness.LOW, costs)
    auto = _figures(Eagerness.AUTO, costs)
    high = _figures(Eagerness.HIGH, costs)
    faster = _faster_models(costs)
    if low.request_ms > LONG_SILENCE_MS:
        late = low.request_ms - LONG_SILENCE_MS
        low = _warn(low, f"whisper's transcript comes {late} ms after the long silence; {faster}")
    if not auto.ends_early:
        auto = _warn(
            auto,
            f"whisper and Smart Turn decide {_at(Eagerness.AUTO, costs)} ms after your last word, after the "
            f"{LONG_SILENCE_MS} ms silence: every turn waits for the silence, as under low; {faster}, "
            "or choose low",
        )
    if not high.ends_early:
        high = _warn(
            high,
            f"whisper and Smart Turn decide {_at(Eagerness.HIGH, costs)} ms after your last word, after the "
            f"{LONG_SILENCE_MS} ms silence: high never answers sooner; choose low instead of high, "
            f"or {faster}",
        )
    elif high.first_audio_ms >= LONG_SILENCE_MS:
        high = _warn(
            high,
            f"its first audio comes {high.first_audio_ms} ms after your last word before the LLM's own time, "
            f"not under the {LONG_SILENCE_MS} ms high is for; auto answers "
            f"{auto.first_audio_ms - high.first_audio_ms} ms later and holds back from your pauses: choose "
            f"auto instead of high, or {_faster_models(costs, voice=True)}",
        )
    return {figures.eagerness: figures for figures in (low, auto, high)}


def as_json(figures: dict[str, Expected]) -> dict[str, Any]:
    return {name: asdict(figures[name]) for name in EAGERNESS}


def _figures(eagerness: Eagerness, costs: Costs) -> Expected:
    pause = HIGH_PAUSE_MS if eagerness is Eagerness.HIGH else SHORT_PAUSE_MS
    decided = pause + costs.decision_ms
    ends_early = eagerness is not Eagerness.LOW and decided < LONG_SILENCE_MS
    # low asks whisper alone (the engine drops Smart Turn's judgement there); the others ask both at once
    transcribed = pause + (costs.whisper_ms if eagerness is Eagerness.LOW else costs.whisper_beside_ms)
    # else the long silence ends it, and the request waits for the transcript of the pause's offer
    request = decided if ends_early else max(LONG_SILENCE_MS, transcribed)
    first_audio = request + costs.first_audio_ms
    if ends_early and eagerness is Eagerness.AUTO:
        first_audio = max(START_MS, first_audio)  # the hold: it starts at START_MS and adapts
    return Expected(eagerness.value, ends_early, round(request), round(first_audio))


def _at(eagerness: Eagerness, costs: Costs) -> int:
    pause = HIGH_PAUSE_MS if eagerness is Eagerness.HIGH else SHORT_PAUSE_MS
    return round(pause + costs.decision_ms)


def _faster_models(costs: Costs, voice: bool = False) -> str:
    """What would shorten the decision (and with ``voice`` the first audio), from what takes longest."""
    if voice and costs.first_audio_ms > costs.decision_ms:
        return (
            f"the first audio of a reply takes {costs.first_audio_ms:.0f} ms to synthesize: use a voice "
            "server on a faster machine (--tts URL)"
        )
    if costs.smart_turn_ms > costs.whisper_ms:
        return (
            f"Smart Turn takes {costs.smart_turn_ms:.0f} ms a decision here (it always runs on this "
            "machine): leave the cores to voice, or run it on a faster CPU"
        )
    if costs.asr_is_server:
        return f"the speech server ({costs.asr}) takes {costs.whisper_ms:.0f} ms: use a faster one"
    if costs.smaller_asr is not None:
        return (
            f"whisper {costs.asr} takes {costs.whisper_ms:.0f} ms: use a smaller model "
            f"(--asr-model {costs.smaller_asr}) or a speech server on a faster machine (--asr URL)"
        )
    return (
        f"whisper {costs.asr} takes {costs.whisper_ms:.0f} ms and is the smallest model: use a speech "
        "server on a faster machine (--asr wyoming://HOST:PORT or an OpenAI-compatible http URL)"
    )


def _warn(figures: Expected, why: str) -> Expected:
    return replace(figures, warning=why)
