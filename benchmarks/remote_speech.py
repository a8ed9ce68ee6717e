"""How exact the heard prefix stays when ASR and TTS run on a speech server, as JSON.

Every scenario in audio/scenarios with an interruption runs in virtual time three ways: ``local`` (whisper
and piper here, word spans from piper's phoneme alignments), ``wyoming`` (wyoming-faster-whisper and
wyoming-piper on loopback: spans estimated per sentence, from the sentence streaming) and ``openai``
(faster-whisper-server and local-tts-studio, both OpenAI-compatible: spans estimated over each chunk's
whole audio). For each, whisper (its full window) transcribes what speaker.wav really played in every turn
and counts the turns whose reported heard text is within one word of it, and exactly equal in length.

Both servers' voices add piper's noise, so each remote way runs ``--runs`` times (default 3) for more
interrupted turns; the local way is deterministic and runs once.

Usage (from the repository root): PYTHONPATH=. python benchmarks/remote_speech.py [--runs N]   (about 10
minutes on 2 cores with 3 runs)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from barge_in import SCENARIOS, Run, progress, simulate, spoken_prefix, words

from tests.remote.servers import (
    LOCAL_TTS_RATE,
    faster_whisper_server_command,
    free_port,
    local_tts_command,
    local_tts_home,
    running,
    wyoming_piper_command,
    wyoming_whisper_command,
)
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.components import SpeechModels, load_speech_models
from voice.remote.speech import synthesizer_for, transcriber_for
from voice.turn_end.smart_turn import SmartTurn


def interrupting_scenarios() -> list[Path]:
    return [
        path
        for path in sorted(SCENARIOS.glob("*.json"))
        if json.loads(path.read_text(encoding="utf-8")).get("expect", {}).get("interruptions", 0) > 0
    ]


def exact_share(runs: list[Run], judge: WhisperTranscriber) -> float | None:
    """Interrupted turns whose heard text has exactly the word count whisper finds in what played."""
    exact: list[bool] = []
    for run in runs:
        speaker = read_wav(run.out / "speaker.wav").samples
        for turn in run.report["turns"]:
            if not turn["interrupted"] or turn["audio_start_s"] is None:
                continue
            start, end = (round(turn[key] * ENGINE_RATE) for key in ("audio_start_s", "audio_end_s"))
            played = judge.transcribe(AudioBlock(speaker[start:end], ENGINE_RATE)).text
            exact.append(len(words(played)) == len(words(turn["spoken"])))
    return round(sum(exact) / len(exact), 3) if exact else None


def measure(
    label: str, models: SpeechModels, work: Path, judge: WhisperTranscriber, started: float, repeats: int = 1
) -> Any:
    runs = []
    for repeat in range(repeats):
        for path in interrupting_scenarios():
            progress(f"{label} {repeat + 1}/{repeats}: {path.stem}", started)
            runs.append(simulate(path, work / label / str(repeat) / path.stem, models))
    prefix = spoken_prefix(runs, judge)
    return {
        "interrupted_turns": prefix["interrupted_turns"],
        "within_one_word": prefix["interrupted_fraction"],
        "exact": exact_share(runs, judge),
        "misses": prefix["misses"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each remote way (default 3)")
    repeats = parser.parse_args().runs
    started = time.monotonic()
    judge = WhisperTranscriber(WhisperSettings(short_window=False))
    result: dict[str, Any] = {"scenarios": [path.stem for path in interrupting_scenarios()], "runs": repeats}
    with tempfile.TemporaryDirectory(prefix="remote-speech-") as folder, contextlib.ExitStack() as servers:
        work = Path(folder)
        result["local"] = measure("local", load_speech_models(), work, judge, started)
        ports = [free_port() for _ in range(4)]
        commands = [
            (wyoming_whisper_command(ports[0], work), {}),
            (wyoming_piper_command(ports[1], work), {}),
            (faster_whisper_server_command(ports[2]), {}),
            (local_tts_command(ports[3]), local_tts_home(work / "local-tts")),
        ]
        for index, ((command, env), port) in enumerate(zip(commands, ports, strict=True)):
            servers.enter_context(running(command, port, work / f"server-{index}.log", env))
        wyoming = SpeechModels(
            transcriber_for(f"wyoming://127.0.0.1:{ports[0]}"),
            synthesizer_for(f"wyoming://127.0.0.1:{ports[1]}"),
            SmartTurn(),
        )
        result["wyoming"] = measure("wyoming", wyoming, work, judge, started, repeats)
        openai = SpeechModels(
            transcriber_for(f"http://127.0.0.1:{ports[2]}/v1"),
            synthesizer_for(f"http://127.0.0.1:{ports[3]}/v1?rate={LOCAL_TTS_RATE}"),
            SmartTurn(),
        )
        result["openai"] = measure("openai", openai, work, judge, started, repeats)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
