"""What the config says about telemetry (``[telemetry]``): all of it off unless asked for."""

from __future__ import annotations

from dataclasses import dataclass

OTLP_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"  # the standard variable, over the file's otlp_endpoint


@dataclass(frozen=True)
class TelemetrySettings:
    """``otlp_endpoint``: the collector's base URL (traces go to its /v1/traces); None: no traces.
    ``include_text``: spans carry what the user said and heard. ``metrics_port``: `voice chat` serves
    /metrics and /healthz on 127.0.0.1 there (the kiosk serves them on its own port)."""

    otlp_endpoint: str | None = None
    include_text: bool = False
    metrics_port: int | None = None
