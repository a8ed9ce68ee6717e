"""Which wake word a setting names: a model bundled in ``pymicro-wakeword`` by name, or a model's file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from voice.errors import ConfigError
from voice.wake.port import WakeDetector

WYOMING = "wyoming://"


@dataclass(frozen=True)
class WakeModel:
    """A microWakeWord model: its name, the words it hears, its config file and its own cutoff."""

    name: str
    phrase: str
    config: Path
    cutoff: float


def _bundled_folder() -> Path | None:
    spec = find_spec("pymicro_wakeword")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "models"


def _read(config: Path) -> WakeModel:
    data = json.loads(config.read_text(encoding="utf-8"))
    return WakeModel(config.stem, str(data["wake_word"]), config, float(data["micro"]["probability_cutoff"]))


def bundled_wake_models() -> tuple[WakeModel, ...]:
    """The models the installed ``pymicro-wakeword`` ships (none if it is not installed)."""
    folder = _bundled_folder()
    if folder is None or not folder.is_dir():
        return ()
    return tuple(_read(config) for config in sorted(folder.glob("*.json")))


def wake_model(word: str) -> WakeModel:
    """The model ``word`` names: a bundled name ("okay_nabu") or a microWakeWord ``.json`` config path
    (its ``.tflite`` beside it, as the model's own config says); ConfigError in one line if none."""
    for model in bundled_wake_models():
        if model.name == word:
            return model
    path = Path(word).expanduser()
    if path.suffix == ".tflite":
        path = path.with_suffix(".json")  # the model's cutoff and window are in its config beside it
    if "/" in word or path.suffix == ".json":
        try:
            return _read(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{word} is no readable microWakeWord config ({exc})") from exc
    names = ", ".join(model.name for model in bundled_wake_models()) or "none: pip install pymicro-wakeword"
    raise ConfigError(
        f"{word!r} is neither a bundled wake word ({names}) nor a model's .json nor {WYOMING}HOST:PORT"
    )


def check_wake_word(word: str) -> str:
    """``word`` if some wake detector can be made for it (a server's is reached only when opened)."""
    if word.startswith(WYOMING):
        from voice.wake.wyoming_wake import check_wyoming_wake_url

        check_wyoming_wake_url(word)
    else:
        wake_model(word)
    return word


def open_wake_detector(word: str) -> WakeDetector:
    """The detector for ``word``: a local model, or a Wyoming wake server for ``wyoming://HOST:PORT``."""
    if word.startswith(WYOMING):
        from voice.wake.wyoming_wake import WyomingWakeDetector

        return WyomingWakeDetector(word)
    from voice.wake.micro import MicroWakeDetector

    return MicroWakeDetector(wake_model(word).config)
