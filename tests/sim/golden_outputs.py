"""The recorded outputs of every scenario in audio/scenarios, to compare a refactor's runs against.

Re-record (only when a change of output is intended, and say why in the commit):

    PYTHONPATH=$PWD python -m tests.sim.golden_outputs [NAME ...]

writes tests/sim/golden/NAME.json for the named scenarios (all when none is named): report.json,
events.jsonl, session.jsonl without its wall-clock ``time`` fields, and the sha256 of each WAV.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

# The same OpenBLAS kernels as under pytest (tests/conftest.py), or the recording differs from the runs.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

GOLDEN = Path(__file__).resolve().parent / "golden"
AUDIO = Path(__file__).resolve().parents[2] / "audio"
WAVS = ("mic.wav", "speaker.wav")


def outputs_of(out: Path) -> dict[str, Any]:
    """What a run wrote into ``out``, in the form it is recorded and compared."""
    session = [json.loads(line) for line in (out / "session.jsonl").read_text().splitlines()]
    return {
        "report": json.loads((out / "report.json").read_text()),
        "events": [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()],
        "session": [{k: v for k, v in line.items() if k != "time"} for line in session],
        "sha256": {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in WAVS},
    }


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text())
    return data


def record(names: list[str]) -> None:
    from voice.components import load_speech_models
    from voice.sim.run import run_scenario
    from voice.sim.scenario import load_scenario

    models = load_speech_models()
    GOLDEN.mkdir(exist_ok=True)
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            run_scenario(load_scenario(AUDIO / "scenarios" / f"{name}.json"), Path(tmp), models=models)
            data = outputs_of(Path(tmp))
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        (GOLDEN / f"{name}.json").write_text(text, encoding="utf-8")
        print(f"recorded {name}")


if __name__ == "__main__":
    record(sys.argv[1:] or sorted(path.stem for path in (AUDIO / "scenarios").glob("*.json")))
