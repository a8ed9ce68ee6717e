"""Is the assistant answering? The facts behind ``/healthz`` and `voice status`.

Four checks, each ``ok`` or a short reason: ``audio`` (the engine loop handled a mic block lately: the
loop and the microphone, or the page's audio, both alive; the last ``audio`` error event says why not),
``llm`` (its server answers ``GET /models``, asked at most every ``PROBE_EVERY_S``), ``asr`` and ``tts``
(no failure since their last success, as the ``error`` events tell it; a remote speech server must also
accept a connection). A subscriber of the event stream, so it knows what clients were told.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from voice.client_events import SPOKEN_INPUT, Failure, InputTranscript, OutputAudioStarted, StreamEvent
from voice.telemetry.heartbeat import Heartbeat
from voice.telemetry.probes import Probe

STALE_S = 5.0  # a mic block is handled every 40 to 160 ms: this long without one, the audio path is down


@dataclass(frozen=True)
class HealthReport:
    checks: dict[str, str]  # check name: "ok" or why not

    @property
    def ok(self) -> bool:
        return all(value == "ok" for value in self.checks.values())

    @property
    def status_code(self) -> int:
        return 200 if self.ok else 503

    def reason(self) -> str:
        return "; ".join(f"{name}: {why}" for name, why in self.checks.items() if why != "ok")

    def json(self) -> bytes:
        body: dict[str, object] = {"status": "ok" if self.ok else "failing", "checks": self.checks}
        if not self.ok:
            body["reason"] = self.reason()
        return json.dumps(body).encode() + b"\n"


class Health:
    """The checks, from the heartbeat, the stream's error events and the probes given."""

    def __init__(
        self,
        heartbeat: Heartbeat,
        llm: Probe | None = None,
        asr: Probe | None = None,
        tts: Probe | None = None,
    ) -> None:
        self._heartbeat = heartbeat
        self._probes = {"llm": llm, "asr": asr, "tts": tts}
        self._failed: dict[str, str | None] = {"audio": None, "asr": None, "tts": None}

    def see(self, event: StreamEvent) -> None:
        match event:
            case Failure(code=code, message=message) if code in self._failed:
                self._failed[code] = message
            case InputTranscript(id=input_id) if input_id.startswith(SPOKEN_INPUT):  # ASR answered
                self._failed["asr"] = None
            case OutputAudioStarted():
                self._failed["tts"] = None

    def report(self) -> HealthReport:
        """Every check now (a probe may wait seconds for its server: call it off the engine's loop)."""
        checks = {"audio": self._audio()}
        for name in ("llm", "asr", "tts"):
            probe, failed = self._probes[name], self._failed.get(name)
            checks[name] = failed if failed is not None else probe.answer() if probe is not None else "ok"
        return HealthReport(checks)

    def _audio(self) -> str:
        age = self._heartbeat.age_s()
        if age is not None and age < STALE_S:
            self._failed["audio"] = None  # blocks flow again: the device is back
            return "ok"
        why = self._failed["audio"]
        if why is not None:
            return why
        if age is None:
            return "starting: no mic block handled yet"
        return f"no mic block handled for {age:.1f} s (engine loop blocked or microphone silent)"
