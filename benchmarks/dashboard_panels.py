"""The panels of deploy/grafana-voice.json drawn from real data, for the README (no Grafana here).

Runs a real `voice kiosk --audio websocket` (whisper, piper, the stand-in LLM at interrupt-mid.json's
pace) through kiosk_cut_in_load.py's cut-in cycles for ``--seconds``, scraped every 2 s by a real
Prometheus (Debian's package, on loopback, its own config and data in a temporary folder). Then each
panel's own PromQL from the dashboard JSON (``$__rate_interval`` as ``--rate-interval``, ``$instance`` as
all) goes through Prometheus's ``/api/v1/query_range``; the series are drawn as SVG lines in a grid of
the dashboard's layout, and headless chromium takes the screenshot. The picture is ours, not Grafana's;
the numbers in it are Prometheus's answers to the dashboard's queries. Prints what each panel got.

Usage: PYTHONPATH=. python benchmarks/dashboard_panels.py [--seconds 300] [--out docs/dashboard.png]
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from common.kiosk_process import KioskOutput, stop_kiosk
from common.machine import with_cpu
from common.talking_page import SCENARIO, Cycle, reply_to, talk_for

from voice.testing.loopback import free_port
from voice.testing.stand_in_llm import StandInLlm

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "deploy" / "grafana-voice.json"
COLORS = ("#3274d9", "#e0752d", "#56a64b", "#a352cc", "#e02f44", "#8ab8ff", "#f2cc0c")
PANEL_W, PANEL_H = 560, 250  # pixels of a 12-column-wide panel
NOT_NUMBERS = ("NaN", "+Inf", "-Inf")  # a quantile of no observations


def start_prometheus(folder: Path, target: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("prometheus")
    if binary is None:
        raise SystemExit("prometheus is not installed (apt-get install prometheus)")
    config = folder / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 2s\nscrape_configs:\n  - job_name: voice\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    port = free_port()
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit("prometheus did not start")


def query_range(url: str, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
    params: dict[str, str | float] = {"query": expr, "start": start, "end": end, "step": step}
    answer = httpx.get(f"{url}/api/v1/query_range", params=params, timeout=30).json()
    if answer["status"] != "success":
        raise SystemExit(f"{expr}: {answer}")
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def legend(template: str, labels: dict[str, str]) -> str:
    for name, value in labels.items():
        template = template.replace("{{" + name + "}}", value or '""')
    return template


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "bytes":
        return f"{value / 1e6:.0f} MB"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _text(
    x: float, y: float, content: str, size: int = 11, color: str = "#8e8e8e", anchor: str = "start"
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" fill="{color}" font-size="{size}" text-anchor="{anchor}">'
        f"{html.escape(content)}</text>"
    )


def panel_svg(title: str, unit: str, lines: list[tuple[str, list[tuple[float, float]]]], width: int) -> str:
    """One panel: its title, the series as lines over the shared time range, y labels, a legend."""
    height, left, top, bottom = PANEL_H, 64, 28, 46
    points = [value for _, series in lines for _, value in series]
    times = [at for _, series in lines for at, _ in series]
    parts = [
        f'<svg width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f'<rect width="{width}" height="{height}" fill="#181b1f" stroke="#2c3235"/>',
        _text(10, 19, title, 13, "#d8d9da"),
    ]
    if not points:
        parts.append(_text(width / 2, height / 2, "No data", 13, anchor="middle"))
        return "".join(parts) + "</svg>"
    low, high = min(0.0, min(points)), max(points) or 1.0
    first, last = min(times), max(times) or 1.0
    plot_w, plot_h = width - left - 12, height - top - bottom

    def x(at: float) -> float:
        return left + (at - first) / max(last - first, 1e-9) * plot_w

    def y(value: float) -> float:
        return top + plot_h - (value - low) / max(high - low, 1e-12) * plot_h

    for share in (0, 0.5, 1):
        level = y(low + share * (high - low))
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{level:.1f}" y2="{level:.1f}" stroke="#2c3235"/>'
        )
        parts.append(_text(left - 6, level + 4, fmt(low + share * (high - low), unit), anchor="end"))
    parts.append(_text(left + plot_w, top + plot_h + 14, f"last {(last - first) / 60:.0f} min", anchor="end"))
    for index, (name, series) in enumerate(lines):
        color = COLORS[index % len(COLORS)]
        path = " ".join(f"{x(at):.1f},{y(value):.1f}" for at, value in series)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.8"/>')
        parts.append(f'<rect x="{10 + index * 150}" y="{height - 18}" width="10" height="3" fill="{color}"/>')
        parts.append(_text(24 + index * 150, height - 13, name[:22], color="#c7d0d9"))
    return "".join(parts) + "</svg>"


def render(url: str, start: float, end: float, rate_interval: str, out: Path) -> dict[str, Any]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    step = max(2.0, (end - start) / 200)
    rows: dict[int, list[tuple[int, str]]] = {}
    got: dict[str, Any] = {}
    for panel in dashboard["panels"]:
        unit = panel["fieldConfig"]["defaults"]["unit"]
        lines = []
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", rate_interval).replace("$instance", ".*")
            for series in query_range(url, expr, start, end, step):
                values = [
                    (float(at), float(v)) for at, v in series["values"] if v not in ("NaN", "+Inf", "-Inf")
                ]
                lines.append((legend(target["legendFormat"], series["metric"]), values))
        got[panel["title"]] = {name: len(values) for name, values in lines}
        grid = panel["gridPos"]
        width = round(PANEL_W * grid["w"] / 12)
        rows.setdefault(grid["y"], []).append((grid["x"], panel_svg(panel["title"], unit, lines, width)))
    body = "".join(
        '<div style="display:flex;gap:8px;margin-bottom:8px">'
        + "".join(svg for _, svg in sorted(row))
        + "</div>"
        for _, row in sorted(rows.items())
    )
    caption = (
        f"{html.escape(dashboard['title'])}: the panels of deploy/grafana-voice.json, each its own PromQL "
        "through a real Prometheus scraping a real kiosk (drawn by benchmarks/dashboard_panels.py, "
        "not Grafana)"
    )
    page = (
        '<html><body style="background:#111217;font-family:sans-serif;margin:10px">'
        f'<div style="color:#d8d9da;font-size:14px;margin-bottom:8px">{caption}</div>{body}</body></html>'
    )
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "dashboard.html"
        page_path.write_text(page, encoding="utf-8")
        height = 40 + len(rows) * (PANEL_H + 8)
        subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--hide-scrollbars", f"--screenshot={out.resolve()}",
             f"--window-size={2 * PANEL_W + 28},{height}", page_path.as_uri()],
            check=True, capture_output=True,
        )  # fmt: skip
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="cut-in cycles while Prometheus scrapes")
    parser.add_argument("--rate-interval", default="1m", help="what $__rate_interval stands for")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.png")
    args = parser.parse_args()
    paced = SCENARIO["llm"]["first_delta_ms"] / 1000, SCENARIO["llm"]["delta_ms"] / 1000
    with tempfile.TemporaryDirectory(prefix="voice-dashboard-") as name, StandInLlm(reply_to, *paced) as llm:
        folder = Path(name)
        env = {key: value for key, value in os.environ.items() if not key.startswith(("VOICE_", "OTEL_"))}
        env |= {"XDG_STATE_HOME": name, "XDG_CONFIG_HOME": f"{name}/config"}
        command = [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--audio", "websocket",
                   "--sessions", f"{name}/sessions",
                   "--llm-url", llm.url, "--llm-model", "stand-in"]  # fmt: skip
        kiosk = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        output = KioskOutput(kiosk, ready_line="audio devices open")
        prometheus = None
        try:
            port = output.port(600)
            prometheus, url = start_prometheus(folder, f"127.0.0.1:{port}")
            start = time.time()
            cycles: list[Cycle] = []
            asyncio.run(talk_for(f"ws://127.0.0.1:{port}/ws", args.seconds, cycles))
            time.sleep(5)  # the last scrapes
            got = render(url, start, time.time(), args.rate_interval, args.out)
        finally:
            if prometheus is not None:
                prometheus.terminate()
                prometheus.wait(20)
            stop_kiosk(kiosk)
            output.join()
    print(
        json.dumps(
            with_cpu({"out": str(args.out), "cycles": len(cycles), "series_points_by_panel": got}), indent=2
        )
    )


if __name__ == "__main__":
    main()
