"""A real HTTP server on 127.0.0.1 in a background thread, with scriptable failures and a request log."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body or b"{}")

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, data, status: int = 200, headers: dict | None = None) -> Response:
        return cls(
            status, json.dumps(data).encode(), {"Content-Type": "application/json; charset=UTF-8", **(headers or {})}
        )


@dataclass
class Scripted:
    path_contains: str
    response: Response
    method: str | None = None


class FakeServer:
    """Subclasses implement `route(request) -> Response`. Tests queue failures with `script()`: the next
    matching request gets the scripted answer instead of the real one, once per scripted entry."""

    def __init__(self):
        self.lock = threading.RLock()
        self.requests: list[Request] = []
        self.scripted: list[Scripted] = []
        self.httpd: ThreadingHTTPServer | None = None

    # --- lifecycle

    def start(self) -> FakeServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; without TCP_NODELAY a kept-alive client (the
            # connectors' requests.Session) waits ~40 ms for each body (Nagle and delayed ACK).
            disable_nagle_algorithm = True

            def log_message(self, *args):  # keep test output quiet
                pass

            def _handle(self):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    method=self.command,
                    path=parts.path,
                    query={k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self.rfile.read(length) if length else b"",
                )
                try:
                    response = server.dispatch(request)
                except Exception:
                    import traceback

                    response = Response(599, traceback.format_exc().encode(), {"Content-Type": "text/plain"})
                self.send_response(response.status)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)

            do_GET = do_POST = do_DELETE = do_PATCH = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the loop to notice, up to one interval (0.5 s by default).
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    # --- scripting

    def script(self, path_contains: str, response: Response, *, times: int = 1, method: str | None = None) -> None:
        with self.lock:
            self.scripted.extend(Scripted(path_contains, response, method) for _ in range(times))

    def dispatch(self, request: Request) -> Response:
        with self.lock:
            self.requests.append(request)
            for entry in self.scripted:
                if entry.path_contains in request.path and entry.method in (None, request.method):
                    self.scripted.remove(entry)
                    return entry.response
            return self.route(request)

    def route(self, request: Request) -> Response:
        raise NotImplementedError

    def calls(self, path_contains: str = "", method: str | None = None) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if path_contains in r.path and method in (None, r.method)]
