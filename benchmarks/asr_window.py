"""Whisper's cut encoder window against its full 30 s window: does the cut window hear as well, and how fast?

Modes (each prints one JSON object; progress goes to stderr), by what whisper hears:

- ``quiet``: a question asked in the quiet, side by side in one process. Utterances: the speech fixtures
  (audio/manifest.json) as recorded and under pink noise at 10 and 0 dB SNR; long sentences espeak-ng says
  in three more voices (8-14 s, where the window grows); and the corpus of speech the project was not tuned
  on (benchmarks/cases/unfamiliar_speech.py: piper and 24 espeak-ng voices, whole questions and questions
  with a mid-sentence pause, clean and under noise at 20 and 10 dB SNR), each with 0.2 s of the mic signal
  either side. Both transcribers are the real tiny.en and hear the same audio, alternately.

  - ``ms``: transcription time per utterance, median and p95, and the median ratio short/full.
  - ``word_error_rate``: mean WER against the text said, per condition and in all.
  - ``word_error_rate_unfamiliar``: the same over the corpus alone, and per voice family.
  - ``differ``: utterances whose transcripts differ between the two, with both texts and WERs.
  - ``cut_worse``, ``cut_better``: how many utterances the cut window heard worse (better) than the full one.
  - ``broken_off``: the same utterances cut off at 60% of their length, as speech that breaks off
    mid-sentence (a reply cut by the user, a user trailing off): how many the cut window heard at least two
    words fewer of than the full window (whisper stopping early), with both texts. No WER: what was said
    is unknown.

- ``over-reply``: a user cutting in over the reply, in voices beyond the fixtures. Each cut-in (the fixture
  "Sorry, I meant on Sunday." and corrections espeak-ng says now in voices the fixtures do not use) runs
  through echo-sweep cells in the virtual room (benchmarks/barge_in.py sweep: the fox story, the cut-in
  5.1 s into it; echo delays by gains, without and with pink noise). The audio ASR is handed for the
  cut-in (over the reply, after the linear echo canceller) is kept, and then transcribed twice on the same
  model: by the transcriber's own over-reply path (the cut window, with timestamps) and on whisper's full
  30 s window.

  - ``word_error_rate``: mean WER per path, per voice and in all; ``clips_wrong``: clips with any error.
  - ``ms_median``: whisper's time per clip on each path (alternating, one process).
  - ``differ``: clips whose two transcripts differ, with both.

Usage: python benchmarks/asr_window.py quiet [--rounds 1] [--every N]   (about 10 minutes on 2 cores)
       python benchmarks/asr_window.py over-reply [--delays 0,100,250] [--gains 0,-12] [--voices all|fixture]
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cases.unfamiliar_speech import corpus, fixture_maker, with_noise
from common.machine import with_cpu
from common.scenario_runs import AUDIO, SWEEP_CUT_IN, sweep_cell
from common.word_error import wer

from voice.asr.port import Transcriber, Transcript
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.resample import resample
from voice.audio.wav import read_wav, write_wav
from voice.cancel import CancelToken
from voice.components import load_speech_models
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

# --- quiet: a question asked in the quiet

OTHER_VOICES = ("en-gb+f3", "en-us+f2", "en+m7")
LONG_SENTENCES = (
    "I need a recipe for dinner tonight that uses chicken, rice and some of the spinach in the fridge, "
    "and it should not take more than half an hour.",
    "Tell me about the history of the old lighthouse on the northern coast, and why it was closed.",
)
SNR_DB = (10.0, 0.0)
BROKEN_AT = 0.6  # share of an utterance kept when it breaks off


@dataclass(frozen=True)
class Utterance:
    condition: str
    family: str  # the corpus's voice family, "" outside it
    text: str
    samples: Samples


def utterances(every: int) -> list[Utterance]:
    """Every utterance; of the corpus, every ``every``-th."""
    manifest = json.loads((AUDIO / "manifest.json").read_text(encoding="utf-8"))
    noise = read_wav(AUDIO / "pink-noise.wav").samples
    found = []
    for fixture in (f for f in manifest["fixtures"] if f["kind"] == "speech"):
        samples = read_wav(AUDIO / fixture["file"]).samples
        found.append(Utterance("fixtures", "", fixture["text"], samples))
        for snr in SNR_DB:
            noisy = with_noise(samples, noise, snr)
            found.append(Utterance(f"fixtures, noise {snr:g} dB", "", fixture["text"], noisy))
    make = fixture_maker()
    for voice in OTHER_VOICES:
        for text in LONG_SENTENCES:
            long = make.Espeak(voice, 165).speak(text).astype(np.float32)
            found.append(Utterance("long, other voices", "", text, long))
    for said in corpus()[::every]:
        found.append(Utterance(f"unfamiliar, {said.condition}", said.family, said.text, said.speech()))
    return found


def short_of_full(full: list[str], short: list[str]) -> dict[str, Any]:
    """How many of the broken-off utterances the cut window heard two or more words fewer of."""
    fewer = [
        {"full": f, "short": s}
        for f, s in zip(full, short, strict=True)
        if len(s.split()) <= len(f.split()) - 2
    ]
    return {"utterances": len(full), "short_two_words_fewer": len(fewer), "cases": fewer}


def mean_wer(said: list[Utterance], heard: list[str], chosen: list[int]) -> float:
    return round(statistics.mean(wer(said[i].text, heard[i]) for i in chosen), 3)


def quiet(args: argparse.Namespace) -> int:
    said = utterances(args.every)
    transcribers = {
        "full": WhisperTranscriber(WhisperSettings(short_window=False)),
        "short": WhisperTranscriber(WhisperSettings(short_window=True)),
    }
    broken = [u.samples[: int(BROKEN_AT * len(u.samples))] for u in said]
    broken_texts = {
        name: [t.transcribe(AudioBlock(samples, ENGINE_RATE)).text for samples in broken]
        for name, t in transcribers.items()
    }
    times: dict[str, list[float]] = {name: [] for name in transcribers}
    texts: dict[str, list[str]] = {name: [] for name in transcribers}
    for round_ in range(args.rounds):
        for index, utterance in enumerate(said):
            print(f"{round_ + 1}: {index + 1}/{len(said)}", file=sys.stderr)
            for name, transcriber in transcribers.items():
                started = time.perf_counter()
                heard = transcriber.transcribe(AudioBlock(utterance.samples, ENGINE_RATE)).text
                times[name].append((time.perf_counter() - started) * 1000)
                if round_ == 0:
                    texts[name].append(heard)
    everyone = list(range(len(said)))
    groups = {c: [i for i in everyone if said[i].condition == c] for c in sorted({u.condition for u in said})}
    corpus_only = [i for i in everyone if said[i].family]
    families = {
        f: [i for i in corpus_only if said[i].family == f]
        for f in sorted({said[i].family for i in corpus_only})
    }
    errors = {name: [wer(u.text, heard[i]) for i, u in enumerate(said)] for name, heard in texts.items()}
    result: dict[str, Any] = {
        "utterances": len(said),
        "seconds": {
            "median": round(statistics.median(len(u.samples) / ENGINE_RATE for u in said), 2),
            "max": round(max(len(u.samples) / ENGINE_RATE for u in said), 2),
        },
        "ms": {
            name: {
                "median": round(statistics.median(t), 1),
                "p95": round(sorted(t)[round(0.95 * (len(t) - 1))], 1),
            }
            for name, t in times.items()
        },
        "ratio_short_to_full_median": round(
            statistics.median(s / f for s, f in zip(times["short"], times["full"], strict=True)), 3
        ),
        "word_error_rate": {
            name: {
                **{condition: mean_wer(said, heard, chosen) for condition, chosen in groups.items()},
                "all": mean_wer(said, heard, everyone),
            }
            for name, heard in texts.items()
        },
        "word_error_rate_unfamiliar": {
            name: {
                "all": mean_wer(said, heard, corpus_only),
                **{family: mean_wer(said, heard, chosen) for family, chosen in families.items()},
            }
            for name, heard in texts.items()
        }
        if corpus_only
        else None,
        "differ": [
            {
                "said": u.text,
                "condition": u.condition,
                "family": u.family,
                "full": texts["full"][i],
                "short": texts["short"][i],
                "wer_full": round(errors["full"][i], 3),
                "wer_short": round(errors["short"][i], 3),
            }
            for i, u in enumerate(said)
            if texts["full"][i] != texts["short"][i]
        ],
        "cut_worse": sum(s > f for s, f in zip(errors["short"], errors["full"], strict=True)),
        "cut_better": sum(s < f for s, f in zip(errors["short"], errors["full"], strict=True)),
        "broken_off": short_of_full(broken_texts["full"], broken_texts["short"]),
    }
    print(json.dumps(with_cpu(result), indent=2))

    return 0


# --- over-reply: a user cutting in over the reply, through the echo sweep's cells

FIXTURE = ("fixture", "Sorry, I meant on Sunday.")
CUT_IN_VOICES = (
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
    cuts = [(FIXTURE[0], FIXTURE[1], AUDIO / SWEEP_CUT_IN)]
    if args.voices == "all":
        cuts += [(voice, text, spoken(text, voice, folder)) for voice, text in CUT_IN_VOICES]
    clips = []
    for voice, text, wav in cuts:
        cells = folder / voice
        cells.mkdir()
        for noise in (False, True):
            for delay in (int(d) for d in args.delays.split(",")):
                for gain in (int(g) for g in args.gains.split(",")):
                    path = sweep_cell(cells, delay, gain, noise, cut_in=wav)
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


def over_reply(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="cut-in-asr-") as folder:
        clips = cut_in_clips(args, Path(folder))
    print(json.dumps(with_cpu(compare(clips)), indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    quiet_mode = modes.add_parser("quiet", help="a question asked in the quiet")
    quiet_mode.add_argument("--rounds", type=int, default=1)
    quiet_mode.add_argument("--every", type=int, default=1, help="of the corpus, every Nth utterance")
    quiet_mode.set_defaults(command=quiet)
    over_mode = modes.add_parser("over-reply", help="a user cutting in over the reply, in the echo sweep")
    over_mode.add_argument("--delays", default="0,100,250")
    over_mode.add_argument("--gains", default="0,-12")
    over_mode.add_argument("--voices", choices=("all", "fixture"), default="all")
    over_mode.set_defaults(command=over_reply)
    args = parser.parse_args()
    result: int = args.command(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
