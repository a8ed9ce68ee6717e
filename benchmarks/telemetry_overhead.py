"""What telemetry costs, as JSON: barge-in reaction and voice-to-voice off and on, idle CPU with metrics.

Part 1, ``kiosk``: kiosk_cut_in_load.py's cut-in cycles (a fresh conversation, what-weather.wav, then
sorry-sunday.wav 2 s into the reply's audio, through `voice kiosk --audio websocket` with real whisper
and piper and the stand-in LLM at interrupt-mid.json's pace), on kiosks of this tree started in turn:
``off`` (nothing scrapes it, no OTLP endpoint) and ``on`` (a scraper fetches /metrics every
``--scrape-interval`` s and every turn is traced over OTLP/HTTP to a collector on loopback in this
process, which decodes and counts the spans). Rounds alternate off, on, off, on, ... so both see the
same machine. Per mode: the barge-in reaction (onset of the cut-in to the last reply sample the page
got, as kiosk_cut_in_load measures it) and voice-to-voice of the answer to the cut-in (the kiosk's
response.done), p50/p95 over all cycles; the kiosk's CPU in % of one core and its main thread's (the
engine's loop; run time from schedstat: Python 3.11 leaves its other threads unnamed, so the tracer's
own threads show only in the kiosk's total); the scrapes' time and size; the spans received.

Part 0, ``per_event_us``: what one stream event costs the thread that publishes it (the engine's), for
the metrics (prometheus_client updates) and the tracer (a queue put), over a turn's worth of events.

Part 2, ``idle``: idle.py's `voice chat` listening idle on a PulseAudio null sink, with
``--metrics-port`` and scraped every ``--scrape-interval`` s: CPU, by thread kind.

Usage: PYTHONPATH=. python benchmarks/telemetry_overhead.py [--rounds 2] [--seconds 120]
       [--scrape-interval 1] [--idle-seconds 30] [--skip kiosk|idle] [--out FILE]
(a round of both modes takes twice ``--seconds`` plus about a minute of model loading; idle about a minute)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common.kiosk_process import KioskOutput, stop_kiosk
from common.machine import with_cpu
from common.process_cpu import cpu_seconds, thread_run_ns
from common.scraper import Scraper
from common.talking_page import COLD_CYCLES, SCENARIO, Cycle, reply_to, talk_for
from idle import measure as measure_idle
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from voice.audio.pulse import private_pulse
from voice.client_events import (
    InputTranscript,
    OutputAudioStarted,
    OutputAudioStopped,
    ResponseCreated,
    ResponseHeard,
    ResponseInterrupted,
    SpeechStarted,
    SpeechStopped,
    StateChanged,
)
from voice.telemetry.metrics import VoiceMetrics
from voice.telemetry.traces import TurnTracer
from voice.testing.stand_in_llm import StandInLlm


class Collector:
    """An OTLP/HTTP trace collector on loopback that decodes each export and counts its spans."""

    def __init__(self) -> None:
        self.spans = 0
        self.exports = 0
        self.bytes = 0
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.exports += 1
                collector.bytes += len(body)
                collector.spans += sum(
                    len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans
                )
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def percentiles(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 1) if ordered else None,
        "p95": round(ordered[round(0.95 * (len(ordered) - 1))], 1) if ordered else None,
    }


def kiosk_round(mode: str, seconds: float, scrape_interval: float, folder: Path) -> dict[str, Any]:
    """One kiosk of this tree, cut-in cycles for ``seconds``, telemetry ``off`` or ``on``."""
    paced = SCENARIO["llm"]["first_delta_ms"] / 1000, SCENARIO["llm"]["delta_ms"] / 1000
    collector = Collector() if mode == "on" else None
    env = {name: value for name, value in os.environ.items() if not name.startswith(("VOICE_", "OTEL_"))}
    env |= {"XDG_STATE_HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config")}
    if collector is not None:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.endpoint
    with StandInLlm(reply_to, *paced) as llm:
        command = [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--audio", "websocket",
                   "--sessions", str(folder / f"sessions-{mode}"),
                   "--llm-url", llm.url, "--llm-model", "stand-in"]  # fmt: skip
        kiosk = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        output = KioskOutput(kiosk, ready_line="audio devices open")
        scraper = None
        try:
            port = output.port(600)
            if mode == "on":
                scraper = Scraper(f"http://127.0.0.1:{port}/metrics", scrape_interval)
            threads_before, cpu_before = thread_run_ns(kiosk.pid), cpu_seconds(kiosk.pid)
            began = time.monotonic()
            cycles: list[Cycle] = []
            asyncio.run(talk_for(f"ws://127.0.0.1:{port}/ws", seconds, cycles))
            span = time.monotonic() - began
            threads_after, cpu_after = thread_run_ns(kiosk.pid), cpu_seconds(kiosk.pid)
        finally:
            scraped = scraper.close() if scraper is not None else None
            exit_code = stop_kiosk(kiosk)
            output.join()
            if collector is not None:
                time.sleep(1.0)  # the last batch, sent as the kiosk stopped
                collector.close()
    by_thread = {
        name: round(100 * (after - threads_before.get(name, 0)) / 1e9 / span, 3)
        for name, after in threads_after.items()
    }
    return {
        "mode": mode,
        "cycles": len(cycles),
        "barge_in_reaction_ms": percentiles([c.reaction_ms for c in cycles if c.reaction_ms is not None]),
        f"barge_in_reaction_ms_after_the_first_{COLD_CYCLES}": percentiles(
            [c.reaction_ms for c in cycles[COLD_CYCLES:] if c.reaction_ms is not None]
        ),
        "voice_to_voice_ms": percentiles(
            [c.voice_to_voice_ms for c in cycles if c.voice_to_voice_ms is not None]
        ),
        "failed": [c.failed for c in cycles if c.failed is not None],
        "kiosk_cpu_percent_of_one_core": round(100 * (cpu_after - cpu_before) / span, 2),
        "main_thread_run_percent": by_thread.get("main"),  # the engine's loop: what telemetry must not slow
        "scrapes": scraped,
        "spans_received": collector.spans if collector is not None else None,
        "exports": collector.exports if collector is not None else None,
        "exit_code": exit_code,
        "load_average_1": round(os.getloadavg()[0], 2),
    }


def per_event_us(repeats: int = 2000) -> dict[str, float]:
    """Microseconds per stream event on the publishing thread, for each telemetry subscriber."""
    turn = [
        StateChanged("user_speaking", 1.0), SpeechStarted(1.0),
        SpeechStopped(2.0), StateChanged("thinking", 2.0),
        InputTranscript("speech-1", "What about tomorrow?", None, 2.2), ResponseCreated(1, 2.2),
        StateChanged("speaking", 2.6), OutputAudioStarted(1, 2.6),
        *(ResponseHeard(1, "word " * words, words, 2.6 + words / 4) for words in range(1, 13)),
        SpeechStarted(5.8), StateChanged("paused", 5.9),
        ResponseInterrupted(1, "word " * 12, "more words", 5900.0, 6.5), OutputAudioStopped(1, 5.9),
    ]  # fmt: skip
    metrics = VoiceMetrics()
    tracer = TurnTracer(InMemorySpanExporter(), "auto")
    costs = {}
    for name, see in (("metrics", metrics.see), ("traces", tracer.see)):
        began = time.perf_counter()
        for _ in range(repeats):
            for event in turn:
                see(event)
        costs[name] = round((time.perf_counter() - began) / (repeats * len(turn)) * 1e6, 2)
    tracer.close()
    return costs


def side_by_side(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each mode's cycles pooled over its rounds: reaction and voice-to-voice, CPU medians."""
    result: dict[str, Any] = {}
    for mode in ("off", "on"):
        mine = [one for one in rounds if one["mode"] == mode]
        result[mode] = {
            "rounds": len(mine),
            "reaction_p50_ms_by_round": [one["barge_in_reaction_ms"]["p50"] for one in mine],
            "reaction_p95_ms_by_round": [one["barge_in_reaction_ms"]["p95"] for one in mine],
            "voice_to_voice_p50_ms_by_round": [one["voice_to_voice_ms"]["p50"] for one in mine],
            "voice_to_voice_p95_ms_by_round": [one["voice_to_voice_ms"]["p95"] for one in mine],
            "kiosk_cpu_percent_by_round": [one["kiosk_cpu_percent_of_one_core"] for one in mine],
        }
    return result


def idle_with_metrics(listen_s: int, scrape_interval: float) -> dict[str, Any]:
    """idle.py's measure of `voice chat`, serving metrics and scraped as Prometheus would."""
    with tempfile.TemporaryDirectory(prefix="voice-idle-metrics-") as name:
        folder = Path(name)
        (folder / "pulse-runtime").mkdir()
        with private_pulse(folder / "pulse-runtime") as pulse:
            return measure_idle(pulse, folder, listen_s, 5.0, scrape_interval=scrape_interval)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="kiosk rounds of each mode, alternating")
    parser.add_argument("--seconds", type=float, default=120.0, help="cut-in cycles per kiosk round")
    parser.add_argument("--scrape-interval", type=float, default=1.0, help="seconds between scrapes")
    parser.add_argument("--idle-seconds", type=int, default=30)
    parser.add_argument("--skip", choices=("kiosk", "idle"), help="leave out one part")
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    args = parser.parse_args()
    result: dict[str, Any] = {"cpus": os.cpu_count(), "scrape_interval_s": args.scrape_interval}
    result["per_event_us"] = per_event_us()
    if args.skip != "kiosk":
        rounds = []
        with tempfile.TemporaryDirectory(prefix="voice-telemetry-") as name:
            for round_ in range(args.rounds):
                for mode in ("off", "on"):
                    print(f"round {round_ + 1}: telemetry {mode}", file=sys.stderr, flush=True)
                    folder = Path(name) / f"{mode}-{round_}"
                    folder.mkdir()
                    rounds.append(kiosk_round(mode, args.seconds, args.scrape_interval, folder))
        result["kiosk"] = {"side_by_side": side_by_side(rounds), "rounds": rounds}
    if args.skip != "idle":
        print("idle voice chat with metrics", file=sys.stderr, flush=True)
        result["idle_with_metrics"] = idle_with_metrics(args.idle_seconds, args.scrape_interval)
    result["load_average_1_5_15"] = [round(load, 2) for load in os.getloadavg()]
    text = json.dumps(with_cpu(result), indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
