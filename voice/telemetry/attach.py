"""Telemetry for one running assistant: metrics, health, the heartbeat, the watchdog and traces, attached
to its runner, its work and its driver the way any subscriber is."""

from __future__ import annotations

from voice.chat.driver import DeviceConversation
from voice.config.telemetry import TelemetrySettings
from voice.runtime import Work
from voice.telemetry.health import Health
from voice.telemetry.heartbeat import Heartbeat
from voice.telemetry.machine import Cpu
from voice.telemetry.metrics import VoiceMetrics
from voice.telemetry.probes import Probe
from voice.telemetry.traces import TurnTracer
from voice.telemetry.watchdog import Watchdog


class Telemetry:
    """Everything an operator sees of one process."""

    def __init__(
        self,
        settings: TelemetrySettings,
        eagerness: str,
        llm: Probe | None = None,
        asr: Probe | None = None,
        tts: Probe | None = None,
        cpu: Cpu | None = None,
    ) -> None:
        self.heartbeat = Heartbeat()
        self.metrics = VoiceMetrics(cpu)
        self.health = Health(self.heartbeat, llm, asr, tts)
        self.watchdog = Watchdog.from_environment(self.heartbeat)
        self.tracer = (
            TurnTracer.over_http(settings.otlp_endpoint, eagerness, settings.include_text)
            if settings.otlp_endpoint
            else None
        )

    def attach(self, talk: DeviceConversation, work: Work) -> None:
        """Subscribe to ``talk``'s stream and log, watch ``work``, beat once per block ``talk`` handles."""
        runner = talk.runner
        runner.events.subscribe(self.metrics.see)
        runner.on_log_record(self.metrics.note)
        work.watchers.append(self.metrics)
        runner.events.subscribe(self.health.see)
        if self.tracer is not None:
            runner.events.subscribe(self.tracer.see)
            runner.on_log_record(self.tracer.note)
            work.watchers.append(self.tracer)
        self.metrics.watch_devices(talk.device_counters)
        talk.on_step = self.heartbeat.beat
        if self.watchdog is not None:
            self.watchdog.start()

    def close(self) -> None:
        """Say STOPPING=1 and export the traces left."""
        if self.watchdog is not None:
            self.watchdog.stop()
        if self.tracer is not None:
            self.tracer.close()
