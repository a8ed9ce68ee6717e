"""``[telemetry]``: off unless configured, the standard OTLP variable over the file, bad values named."""

from __future__ import annotations

from pathlib import Path

import pytest

from voice.cli import build_parser
from voice.config.settings import load_settings
from voice.config.telemetry import TelemetrySettings
from voice.errors import ConfigError


def test_telemetry_is_off_unless_configured() -> None:
    assert load_settings(build_parser().parse_args(["chat"]), {}).telemetry == TelemetrySettings()


def test_the_file_the_standard_variable_and_the_flag(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[telemetry]\notlp_endpoint = "http://collector:4318"\ninclude_text = true\n')
    args = build_parser().parse_args(["chat", "--config", str(config), "--metrics-port", "9465"])
    settings = load_settings(args, {})
    assert settings.telemetry == TelemetrySettings("http://collector:4318", True, 9465)
    assert settings.source("telemetry.metrics_port") == "flag --metrics-port"
    overridden = load_settings(args, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"})
    assert overridden.telemetry.otlp_endpoint == "http://other:4318"
    assert overridden.source("telemetry.otlp_endpoint") == "environment OTEL_EXPORTER_OTLP_ENDPOINT"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('otlp_endpoint = "collector:4318"', "telemetry.otlp_endpoint must be an http:// or https:// URL"),
        ('include_text = "yes"', "telemetry.include_text must be true or false"),
        ("metrics_port = 0", "telemetry.metrics_port must be a whole number from 1 to 65535"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[telemetry]\n{text}\n")
    with pytest.raises(ConfigError, match=message):
        load_settings(build_parser().parse_args(["kiosk", "--config", str(config)]), {})
