"""An OTLP/HTTP trace receiver on loopback: decodes each export request's protobuf into its spans."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    span_id: str
    parent_span_id: str
    trace_id: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    service: str


def _value(value: Any) -> Any:
    """An OTLP AnyValue as Python: one of its typed fields."""
    for kind in ("stringValue", "boolValue", "doubleValue"):
        if kind in value:
            return value[kind]
    if "intValue" in value:
        return int(value["intValue"])
    return value


class OtlpReceiver:
    """``with OtlpReceiver() as receiver:`` serves ``receiver.endpoint``; ``spans`` holds what came."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.take(request, self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def take(self, request: ExportTraceServiceRequest, path: str) -> None:
        if path != "/v1/traces":
            raise AssertionError(f"spans posted to {path}, not /v1/traces")
        data = MessageToDict(request)
        with self._lock:
            self.requests += 1
            for resource in data.get("resourceSpans", []):
                resource_attributes = {
                    item["key"]: _value(item["value"]) for item in resource["resource"].get("attributes", [])
                }
                for scope in resource.get("scopeSpans", []):
                    for span in scope.get("spans", []):
                        self.spans.append(
                            ReceivedSpan(
                                span["name"],
                                span["spanId"],
                                span.get("parentSpanId", ""),
                                span["traceId"],
                                int(span["startTimeUnixNano"]),
                                int(span["endTimeUnixNano"]),
                                {item["key"]: _value(item["value"]) for item in span.get("attributes", [])},
                                str(resource_attributes.get("service.name")),
                            )
                        )

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
