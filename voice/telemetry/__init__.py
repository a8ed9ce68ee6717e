"""Running a fleet: Prometheus metrics, OpenTelemetry traces, health and the systemd watchdog."""
