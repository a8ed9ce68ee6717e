"""deploy/grafana-voice.json asks only for metrics voice exposes, in PromQL Prometheus accepts; the scrape
config in deploy/ is one promtool accepts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.prometheus_server import Prometheus
from voice.telemetry.metrics import VoiceMetrics
from voice.testing.deploy_units import DEPLOY

DASHBOARD = json.loads((DEPLOY / "grafana-voice.json").read_text(encoding="utf-8"))
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$instance": ".*"}


def expressions() -> list[str]:
    found = [target["expr"] for panel in DASHBOARD["panels"] for target in panel["targets"]]
    for name, value in GRAFANA_VARIABLES.items():
        found = [expr.replace(name, value) for expr in found]
    return found


def exposed_series() -> set[str]:
    """Every series name a scrape may hold (labelled ones once they have a child)."""
    metrics = VoiceMetrics()
    metrics.watch_devices(dict)
    families = list(metrics.registry.collect())
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    return {family.name + suffix for family in families for suffix in suffixes.get(family.type, ("",))}


def test_every_panel_asks_for_metrics_voice_exposes() -> None:
    exposed = exposed_series()
    asked = {name for expr in expressions() for name in re.findall(r"\b((?:voice|process)_[a-z_]+)\b", expr)}
    assert asked
    assert asked <= exposed, asked - exposed
    titles = " ".join(panel["title"] for panel in DASHBOARD["panels"]).lower()
    for topic in ("voice-to-voice", "reaction", "outcome", "errors", "clients", "memory"):
        assert topic in titles


def test_the_scrape_config_is_one_prometheus_takes(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool comes with Debian's prometheus package (scripts/install.sh)"
    token = tmp_path / "voice-token"
    token.write_text("secret\n")
    config = tmp_path / "prometheus.yml"
    text = (DEPLOY / "prometheus-voice.yml").read_text(encoding="utf-8")
    config.write_text(text.replace("/etc/prometheus/voice-token", str(token)), encoding="utf-8")
    checked = subprocess.run([promtool, "check", "config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
@pytest.mark.processes
def test_prometheus_parses_every_panels_query(tmp_path: Path) -> None:
    with Prometheus(tmp_path, "127.0.0.1:9") as prometheus:
        for expr in expressions():
            prometheus.query(expr)  # raises on bad_data
