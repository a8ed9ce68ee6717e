"""What whisper hears of users cutting in over the reply, in voices beyond the fixtures, printed as JSON.

Each cut-in (the fixture "Sorry, I meant on Sunday." and corrections espeak-ng says now in voices the
fixtures do not use) runs through echo-sweep cells in the virtual room (benchmarks/echo_sweep.py: the fox
story, the cut-in 5.1 s into it; echo delays by gains, without and with pink noise). The audio ASR is handed
for the cut-in (over the reply, after the linear echo canceller) is kept, and then transcribed twice on the
same model: by the transcriber's own over-reply path and on whisper's full 30 s window.

- ``word_error_rate``: mean WER per path, per voice and in all; ``clips_wrong``: clips with any error.
- ``ms_median``: whisper's time per clip on each path (alternating, one process).
- ``differ``: clips whose two transcripts differ, with both.

Usage: python benchmarks/cut_in_asr.py [--delays 0,100,250] [--gains 0,-12] [--voices all|fixture]
(about 10 s a cell on 2 cores; 7 cut-ins x 12 cells by default)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import echo_sweep
import numpy as np
from common.word_error import wer

from voice.asr.port import Transcriber, Transcript
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.resample import resample
from voice.audio.wav import read_wav, write_wav
from voice.cancel import CancelToken
from voice.components import load_speech_models
from voice.sim.commands import run_scenario
from voice.sim.scenario import load_scenario

FIXTURE = ("fixture", "Sorry, I meant on Sunday.")
OTHER_VOICES = (
    ("en-gb+f3", "No, I meant the one on Tuesday."),
    ("en-us+f2", "Wait, make that a table for four."),
    ("en+m7", "Actually, tell me about Paris instead."),
    ("en-us+m1", "Sorry, I said fifteen minutes, not fifty."),
    ("en-gb-scotland+f4", "Stop, call my sister instead."),
    ("en-us+f3", "Hang on, what about the weekend?"),
)
LEAD_S = 0.3  # silence around the espeak sentence, as the fixtures have


class KeepingTranscriber:
    """The real transcriber, keeping the audio of its last over-reply call (the cut-in's final one)."""

    def __init__(self, inner: Transcriber) -> None:
        self.inner = inner
        self.kept: AudioBlock | None = None

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        if over_reply and not word_timings:
            self.kept = audio
        hint = (
            {"context": context} if context else {}
        )  # a tree older than context (--against) is never asked it
        return self.inner.transcribe(
            audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel, **hint
        )


def spoken(text: str, voice: str, folder: Path) -> Path:
    """``text`` said by espeak-ng's ``voice``, at the engine's rate with the fixtures' lead, as a WAV."""
    path = folder / f"{voice}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", "165", "-w", str(path), text], check=True)
    block = read_wav(path, rate=None)
    lead = np.zeros(int(LEAD_S * ENGINE_RATE), dtype=np.float32)
    samples = resample(block.samples, block.rate, ENGINE_RATE).astype(np.float32)
    write_wav(path, AudioBlock(np.concatenate((lead, samples, lead)), ENGINE_RATE))
    return path


def cut_in_clips(args: argparse.Namespace, folder: Path) -> list[dict[str, Any]]:
    """Every cell's cut-in audio as ASR was handed it, with the voice, the text said and the cell."""
    models = load_speech_models()
    keeper = KeepingTranscriber(models.transcriber)
    models = dataclasses.replace(models, transcriber=keeper)
    cuts = [(FIXTURE[0], FIXTURE[1], echo_sweep.AUDIO / echo_sweep.CUT_IN)]
    if args.voices == "all":
        cuts += [(voice, text, spoken(text, voice, folder)) for voice, text in OTHER_VOICES]
    clips = []
    for voice, text, wav in cuts:
        echo_sweep.CUT_IN = str(wav)  # cell_scenario reads it
        cells = folder / voice
        cells.mkdir()
        for noise in (False, True):
            for delay in (int(d) for d in args.delays.split(",")):
                for gain in (int(g) for g in args.gains.split(",")):
                    path = echo_sweep.cell_scenario(cells, delay, gain, noise)
                    keeper.kept = None
                    run_scenario(load_scenario(path), cells / path.stem, models=models)
                    cell = {"voice": voice, "said": text, "delay_ms": delay, "gain_db": gain, "noise": noise}
                    clips.append({**cell, "audio": keeper.kept})
                    print(f"  {json.dumps(cell)}", file=sys.stderr, flush=True)
    return clips


def compare(clips: list[dict[str, Any]]) -> dict[str, Any]:
    """Both paths on each clip: WER per voice and in all, clips wrong, time, and the clips they differ on."""
    paths = {
        "over_reply": WhisperTranscriber(),
        "full_window": WhisperTranscriber(WhisperSettings(short_window=False)),
    }
    rows = []
    for clip in clips:
        audio = clip["audio"]
        row = {k: v for k, v in clip.items() if k != "audio"}
        if audio is None:
            rows.append({**row, "missed": True})
            continue
        for name, transcriber in paths.items():
            started = time.perf_counter()
            heard = transcriber.transcribe(audio, over_reply=True).text
            row[name] = {"heard": heard, "wer": round(wer(clip["said"], heard), 3)}
            row[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
        rows.append(row)
    heard = [row for row in rows if not row.get("missed")]
    voices = sorted({row["voice"] for row in heard})

    def mean_wer(name: str, voice: str | None = None) -> float:
        return round(statistics.mean(r[name]["wer"] for r in heard if voice in (None, r["voice"])), 3)

    return {
        "clips": len(heard),
        "missed": len(rows) - len(heard),
        "word_error_rate": {
            name: {**{voice: mean_wer(name, voice) for voice in voices}, "all": mean_wer(name)}
            for name in paths
        },
        "clips_wrong": {name: sum(r[name]["wer"] > 0 for r in heard) for name in paths},
        "ms_median": {name: statistics.median(r[name]["ms"] for r in heard) for name in paths},
        "differ": [
            {
                "voice": r["voice"],
                "cell": [r["delay_ms"], r["gain_db"], r["noise"]],
                "said": r["said"],
                **{name: r[name]["heard"] for name in paths},
            }
            for r in heard
            if r["over_reply"]["heard"] != r["full_window"]["heard"]
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--delays", default="0,100,250")
    parser.add_argument("--gains", default="0,-12")
    parser.add_argument("--voices", choices=("all", "fixture"), default="all")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cut-in-asr-") as folder:
        clips = cut_in_clips(args, Path(folder))
    print(json.dumps(compare(clips), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
