"""Device-loop soak: one assistant on a private PulseAudio null sink (a 0 dB echo loop), printed as JSON.

The speaker's null sink is the microphone's monitor, so every word the assistant says comes straight
back on the mic, as from loud desktop speakers. A scripted model tells a long story to every question
and a short "Okay" to a question that cut it off; the user's WAVs are played into the same sink with
paplay. For ``--minutes``, in one process, stretches of ``--stretch-minutes`` of two kinds alternate:

- ``quiet``: questions only, each asked once the previous story has played out.
  Any interrupted turn here is the assistant cutting itself off on its own echo.
- ``interruptions``: a question, then ``--after-s`` into its story an interruption WAV cuts in.
- ``backchannels`` (with ``--backchannels``, a third kind, between the two): a question, then over its
  story ``--backchannels-per-reply`` listener's backchannels ("yeah", "okay", "mm-hmm"... in the held-out
  espeak-ng voices of benchmarks/cases/full_duplex_cases.py), one every ``--backchannel-every-s`` from
  ``--after-s`` on, then a real cut-in as many seconds after the last. Reported under ``backchannels``: the
  replies they cut and the requests they sent (issue 36: none of either), what the stream said of them;
  the cut-ins' reaction under ``phases`` and ``interruptions``, beside the interruptions stretch's. With
  ``--opening-cut-ins`` every other such cut-in opens with a listener's word and a breath ("Yeah, ... but
  what happens on Thursday?", full_duplex.py's held-out cases, issue 45); each interruption's row says what
  of its words reached the transcript (``words_kept``, ``extra_words``).

Reported: ``turns`` against ``expected_turns`` (one per WAV played that asks one, so not for a stop
phrase; 1.00 means no self-interruption), ``self_interruptions`` (interrupted turns nobody interrupted),
the interrupting utterances' WER against the same WAVs transcribed alone, the reaction (estimated: the
WAV's speech onset is placed on the mic clock with the paplay-to-VAD delay measured on the quiet
questions, so it is approximate to a block or two), the device counters (overflows, underflows,
re-alignments) and RSS and malloc's in-use and kept memory every ``--rss-every-s`` (to tell a warm-up that
levels off from growth that does not).
``--true-reaction`` measures each cut-in's reaction in what the mic really captured.
``--television DB`` takes turns only from the conversation's speaker (``[turn] speaker = "conversation"``),
so the user is one voice (the fixtures are five, the assistant's own among them): the questions and cut-ins of
full_duplex.py's cases said by its first held-out espeak-ng voice. Once the first question is answered, it
plays a television into the same sink to the end: a real reader of
audio/real/ (the Austen reader, held out from the speaker verdict's tuning), reverberated, ``DB`` under the
questions' speech level, talking on. A cut it makes has no WAV of the user's playing, so it counts as a
``self_interruptions``; its answers show in ``turns_per_expected``; ``television`` says what was ignored.
``--trace-every-min`` also compares tracemalloc snapshots and live objects by type against the first,
taken at ``--trace-from-min``, to say which lines of Python hold what grew.

Usage: python benchmarks/device_soak.py [--minutes 60] [--stretch-minutes 5] [--after-s 2.5]
       [--out FILE] [--true-reaction] [--trace-every-min 10] [--against TREE]   (twice as long with
       --against, which soaks TREE's voice package first and prints {"before": ..., "after": ...})
       [--backchannels [--backchannels-per-reply 3] [--backchannel-every-s 3.5]] [--television 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import soak_script
from common.harness import print_measured, spread
from common.mic_echo import RecordingCanceller, echo_lag, true_reactions
from common.process_memory import NativeWindow, PythonGrowth, malloc_mb, memory_summary, quiet_summary, rss_mb
from common.soak_report import analyse, block_summary, speaker_scores
from common.soak_script import (
    AUDIO,
    IDLE_BEFORE_NEXT_S,
    INTERRUPTIONS,
    HandedOut,
    OverStory,
    Script,
    Speakers,
    StoryModel,
    case_clips,
    television,
)

import voice
from voice.allocator import keep_malloc_flat
from voice.audio import devices as sound_devices
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import rescan_devices
from voice.audio.pulse import private_pulse
from voice.audio.wav import read_wav, write_wav
from voice.chat import driver
from voice.chat.driver import (
    DeviceConversation,
    DeviceSettings,
    default_echo_canceller,
    device_openers,
)
from voice.client_events import Failure, StreamEvent
from voice.components import load_speech_models, make_engine, telling_voices_apart
from voice.llm.port import ChatSettings
from voice.recorder import Recorder
from voice.runtime import ChatModelThinker, Work

BLOCK_TIMES_KEPT = 200_000  # the latest mic blocks timed (over 2 hours of 40 ms blocks)
QUIET_BEFORE_SAMPLE_S = 1.0  # listening, nothing queued to play, this long: no call's buffers are held


def keep_played(
    folder: Path, script: Script, manifest: dict[str, dict[str, Any]], paths: dict[str, Path]
) -> None:
    """Beside the kept audio: each user WAV played (copied: the soak's own are in a temporary folder) and
    played.json, where each was played on the mic clock and what it says, and when the television came on
    (benchmarks/loop_words.py)."""
    (folder / "user").mkdir(exist_ok=True)
    played = []
    for play in script.played:
        if not (folder / "user" / play.wav).exists():  # a WAV played again is kept once
            shutil.copyfile(paths.get(play.wav, AUDIO / play.wav), folder / "user" / play.wav)
        entry = manifest[play.wav]
        played.append(
            {"wav": play.wav, "clock": play.clock, "phase": play.phase, "interruption": play.interruption}
            | {key: entry[key] for key in ("text", "start_s", "end_s") if key in entry}
        )
    kept = {"television_from": script.television_from, "played": played}  # mic clock, or None
    (folder / "played.json").write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    manifest = {f["file"]: f for f in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}
    if args.system_malloc or not keep_malloc_flat():  # as `voice chat` does, before any thread starts
        print("glibc malloc left as it is", file=sys.stderr, flush=True)
    with private_pulse(folder / "pulse") as server:
        os.environ["PULSE_SERVER"] = server
        rescan_devices()
        print("loading whisper and piper...", file=sys.stderr, flush=True)
        models = load_speech_models()
        alone = {wav: models.transcriber.transcribe(read_wav(AUDIO / wav)).text for wav in INTERRUPTIONS}
        work = Work(threaded=True)
        speaker = "anyone" if args.television is None else "conversation"
        models = telling_voices_apart(models, speaker)
        engine = make_engine(speaker=speaker)
        canceller = default_echo_canceller()
        if args.lag or args.true_reaction:
            canceller = RecordingCanceller(canceller)
        if args.backlog_s is not None:  # a loaded machine (or a tracemalloc snapshot) stalls the loop
            driver.BACKLOG_S = args.backlog_s
        if args.rest_after_s is not None:  # every question may find the speaker's stream stopped
            sound_devices.REST_AFTER_S = args.rest_after_s
        devices = DeviceSettings("pulse", "pulse")
        handed_out = HandedOut() if args.true_reaction else None
        speakers = Speakers()
        talk = DeviceConversation(
            engine,
            models,
            ChatModelThinker(StoryModel(), ChatSettings(), work),
            work,
            canceller,
            devices,
            open_output=speakers.opener(
                device_openers(devices)[1] if handed_out is None else handed_out.speaker(devices)
            ),
        )
        over = OverStory(args.after_s)
        paths: dict[str, Path] = {}
        if args.backchannels:
            clips = case_clips("backchannel", "backchannel")
            openers = case_clips("opening_word_cut_in", "cut_in") if args.opening_cut_ins else {}
            manifest |= clips | openers
            paths = {name: Path(entry["path"]) for name, entry in (clips | openers).items()}
            alone |= {
                name: models.transcriber.transcribe(read_wav(path)).text for name, path in paths.items()
            }
            over = OverStory(
                args.after_s,
                tuple(clips),
                args.backchannels_per_reply,
                args.backchannel_every_s,
                tuple(openers),
            )
        questions, interruptions = soak_script.QUESTIONS, soak_script.INTERRUPTIONS
        if args.television is not None:  # one user: only the conversation's speaker takes turns
            user, questions, interruptions = soak_script.one_user(folder, args.user_voice)
            manifest |= user
            paths |= {name: Path(entry["path"]) for name, entry in user.items()}
            alone |= {
                name: models.transcriber.transcribe(read_wav(paths[name])).text for name in interruptions
            }
        script = Script(
            talk,
            Recorder.following(talk.runner),
            args.minutes * 60,
            args.stretch_minutes * 60,
            over,
            dict(os.environ),
            (args.limit_minutes or args.minutes + 10) * 60,
            paths,
            questions=questions,
            interruptions=interruptions,
        )
        if args.backchannels:
            talk.runner.events.subscribe(script.watch.see)
        if args.television is not None:
            script.television = television(
                folder,
                args.television,
                (args.limit_minutes or args.minutes + 10) * 60,
                paths[questions[0]],
                args.reader,
            )
        ignored: list[str] = []  # why each input was not taken

        def note_ignored(event: StreamEvent) -> None:
            if event.type == "input.ignored":
                ignored.append(str(getattr(event, "why", "")))

        talk.runner.events.subscribe(note_ignored)

        rss_series: list[list[float]] = []  # [seconds into the soak, MB]
        malloc_series: list[dict[str, float]] = []

        quiet_series: list[list[float]] = []  # the same, taken with nothing in flight: no model buffers
        busy_at = [0.0]

        def on_block() -> None:
            block_s[blocks[0] % BLOCK_TIMES_KEPT] = talk.last_step_s
            blocks[0] += 1
            now = time.monotonic()
            at = now - script.began
            if not rss_series or at - rss_series[-1][0] >= args.rss_every_s:
                rss_series.append([round(at), round(rss_mb())])
                malloc_series.append({"t_s": round(at), **malloc_mb()})
            if talk.runner.state != "listening" or talk.buffer.queued_frames:
                busy_at[0] = now
            elif now - busy_at[0] >= QUIET_BEFORE_SAMPLE_S and (
                not quiet_series or at - quiet_series[-1][0] >= args.rss_every_s
            ):
                quiet_series.append([round(at), round(rss_mb(), 1)])
            script.tick()
            note_heard()
            if script.done:
                talk.stop()

        errors: list[str] = []
        cuts: list[int] = []  # mic clock of each block where speech over a reply paused it

        def note_failure(event: StreamEvent) -> None:
            if isinstance(event, Failure):
                errors.append(event.code)

        talk.runner.events.subscribe(note_failure)
        pause = talk.buffer.pause
        heard_to: dict[int, int | None] = {}  # cut → speaker clock after the last sample counted played

        def noted_pause() -> None:
            cuts.append(talk.clock)
            pause()

        talk.buffer.pause = noted_pause  # type: ignore[method-assign]

        def note_heard() -> None:
            """0.3 s after each pause, where the buffer counts the reply's audio played up to."""
            for cut in cuts[-3:]:
                if cut not in heard_to and talk.clock >= cut + 0.3 * ENGINE_RATE:
                    heard_to[cut] = talk.buffer.clock_of(talk.buffer.audio_played_to)

        block_s = np.zeros(BLOCK_TIMES_KEPT)  # allocated before the start RSS: the soak must not grow itself
        blocks = [0]
        growth = (
            PythonGrowth(
                (__file__, soak_script.__file__), args.trace_from_min * 60, args.trace_every_min * 60
            )
            if args.trace_every_min
            else None
        )
        native = None
        if args.memray is not None:
            native = NativeWindow(args.memray, args.memray_minutes[0] * 60, args.memray_minutes[1] * 60)
        rss_start = rss_mb()
        began = time.monotonic()
        load_start = os.getloadavg()
        if growth is not None:
            growth.start()
        if native is not None:
            native.start()
        try:
            asyncio.run(talk.run(on_block=on_block))
        finally:
            work.close()
            if script.television_player is not None:
                script.television_player.kill()
            if growth is not None:
                growth.stop()
            if native is not None:
                native.stop()
        result = analyse(script, manifest, alone)
        result.update(
            voice_package=str(Path(voice.__file__).parent),
            wall_s=round(time.monotonic() - began, 1),
            load_average={
                "start": [round(x, 2) for x in load_start],
                "end": [round(x, 2) for x in os.getloadavg()],
            },
            memory=memory_summary(rss_series, malloc_series, args.settle_minutes * 60),
            quiet_rss=quiet_summary(quiet_series, args.settle_minutes * 60),
            rss_mb={
                "start": round(rss_start),
                "end": round(rss_mb()),
                "every": rss_series,
                "quiet": quiet_series,
            },
            malloc_mb=malloc_series,
            python_growth=growth.reports if growth is not None else None,
            errors={code: errors.count(code) for code in sorted(set(errors))},
            block_ms=block_summary(block_s[: min(blocks[0], BLOCK_TIMES_KEPT)] * 1000),
            devices={**talk.device_counters(), "speaker_rests": speakers.rests},
            echo_lag=echo_lag(canceller) if args.lag and isinstance(canceller, RecordingCanceller) else None,
        )
        if args.keep_audio is not None and isinstance(canceller, RecordingCanceller):
            args.keep_audio.mkdir(parents=True, exist_ok=True)
            for name in ("mic", "reference", "cleaned"):  # on the mic clock from its first block
                kept = np.concatenate(getattr(canceller, name))
                write_wav(args.keep_audio / f"{name}.wav", AudioBlock(kept, ENGINE_RATE))
            keep_played(args.keep_audio, script, manifest, paths)
        if args.television is not None:
            on_from = script.television_from
            result["television"] = {
                "under_db": args.television,
                "on_from_s": None if on_from is None else round(on_from / ENGINE_RATE, 1),
                "ignored_as_another_voice": ignored.count("another voice"),
                "ignored_otherwise": len(ignored) - ignored.count("another voice"),
                "speaker_scores": (
                    speaker_scores(script, manifest, canceller, models.speaker.embed)
                    if isinstance(canceller, RecordingCanceller) and models.speaker is not None
                    else None  # --true-reaction keeps what the canceller passed on
                ),
            }
        if args.true_reaction and isinstance(canceller, RecordingCanceller):
            assert handed_out is not None
            cut_ins = [(play.wav, play.clock) for play in script.played if play.interruption]
            rows = true_reactions(cut_ins, canceller, manifest, cuts, handed_out.signal(), heard_to)
            keys = (
                "reaction_ms",
                "detection_ms",
                "queued_ms",
                "reaction_ref_ms",
                "queued_ref_ms",
                "heard_gap_ms",
            )
            result["true_reaction"] = {
                key: spread([row[key] for row in rows if row.get(key) is not None]) for key in keys
            } | {"interruptions": rows}
        return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=60.0, help="how long to soak")
    parser.add_argument(
        "--stretch-minutes", type=float, default=5.0, help="quiet and cut-in stretches alternate"
    )
    parser.add_argument("--after-s", type=float, default=2.5, help="into each story before cutting in")
    parser.add_argument(
        "--backchannels",
        action="store_true",
        help="the second kind of stretch plays backchannels over each story before its cut-in",
    )
    parser.add_argument("--backchannels-per-reply", type=int, default=3, help="backchannels over each story")
    parser.add_argument(
        "--opening-cut-ins",
        action="store_true",
        help="with --backchannels: every other cut-in after them opens with a listener's word and a breath",
    )
    parser.add_argument(
        "--backchannel-every-s", type=float, default=3.5, help="from one backchannel (or cut-in) to the next"
    )
    parser.add_argument(
        "--limit-minutes", type=float, help="stop there, done or not (default: --minutes + 10)"
    )
    parser.add_argument("--rss-every-s", type=float, default=30.0, help="how often RSS is sampled")
    parser.add_argument(
        "--backlog-s",
        type=float,
        help="mic audio the loop may fall behind by before it drops some (the driver's own: 2 s; an echo "
        "canceller given a gap stops the soak)",
    )
    parser.add_argument("--settle-minutes", type=float, default=10.0, help="growth is measured after these")
    parser.add_argument("--out", type=Path, help="also write the JSON there")
    parser.add_argument(
        "--trace-every-min",
        type=float,
        help="compare tracemalloc snapshots and live objects by type this often (slows the soak down)",
    )
    parser.add_argument("--trace-from-min", type=float, default=5.0, help="when the first snapshot is taken")
    parser.add_argument("--memray", type=Path, help="record allocations with memray into this file")
    parser.add_argument(
        "--memray-minutes",
        type=lambda text: tuple(float(part) for part in text.split(",")),
        default=(5.0, 15.0),
        help="FROM,TO: the window memray records",
    )
    parser.add_argument(
        "--system-malloc",
        action="store_true",
        help="leave glibc malloc as it is (voice.allocator not applied)",
    )
    parser.add_argument("--lag", action="store_true", help="keep the mic and reference to report their lag")
    parser.add_argument(
        "--keep-audio",
        type=Path,
        metavar="DIR",
        help="with --lag or --true-reaction: write the mic, the reference and what the canceller passed on, "
        "and the user's WAVs with played.json (where each was played: benchmarks/loop_words.py)",
    )
    parser.add_argument(
        "--true-reaction",
        action="store_true",
        help="keep the mic and reference and measure each cut-in's reaction in what the mic captured",
    )
    parser.add_argument(
        "--rest-after-s",
        type=float,
        help=f"the speaker's stream stops after this much idle (voice's own: a few s; the next question "
        f"comes {IDLE_BEFORE_NEXT_S:g} s after a reply, so less makes every question wake it)",
    )
    parser.add_argument(
        "--television",
        type=float,
        metavar="DB",
        help="only the conversation's speaker takes turns, and a television DB under the questions talks on",
    )
    parser.add_argument(
        "--reader", choices=sorted(soak_script.READERS), default="austen", help="with --television: who reads"
    )
    parser.add_argument(
        "--user-voice",
        type=int,
        default=soak_script.USER_VOICE,
        help="with --television: full_duplex's voice N",
    )
    parser.add_argument("--against", type=Path, help="another source tree to soak first, for before/after")
    args = parser.parse_args()

    def measure() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="device-soak-") as folder:
            return run(args, Path(folder))

    print_measured(__file__, args, measure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
