"""A stand-in for the two Supervisor endpoints the add-on calls, on a local HTTP port.

- ``GET /core/api/config``: the Supervisor's proxy of Home Assistant's ``/api/config`` (the
  start script reads Home Assistant's language from it);
- ``POST /discovery``: the discovery message (``{"service": ..., "config": {...}}``); the
  real Supervisor answers ``{"result": "ok", "data": {"uuid": ...}}``
  (``supervisor/api/discovery.py``).

Both want the add-on's token, which the Supervisor takes from ``X-Supervisor-Token`` or
``Authorization: Bearer`` (``supervisor/api/utils.py``); anything else gets 401.
"""

from __future__ import annotations

import http.server
import json
import threading
import uuid


class SupervisorStandIn:
    """Serves until :meth:`close`; ``seen`` lists "METHOD PATH TOKEN" of every request,
    ``discovered`` the bodies posted to ``/discovery``."""

    def __init__(self, token: str, language: str | None = "en-US",
                 host: str = "127.0.0.1") -> None:
        stand_in = self
        self.token = token
        self.seen: list[str] = []
        self.discovered: list[object] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _token(self) -> str:
                given = self.headers.get("X-Supervisor-Token") or \
                    self.headers.get("Authorization", "").split(" ")[-1]
                stand_in.seen.append(f"{self.command} {self.path} {given}")
                return given

            def _answer(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self._token() != stand_in.token:
                    self._answer(401, {"result": "error", "message": "unauthorized"})
                elif self.path == "/core/api/config":
                    self._answer(200, {"language": language, "version": "2026.11.0"})
                else:
                    self._answer(404, {"result": "error"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self._token() != stand_in.token:
                    self._answer(401, {"result": "error", "message": "unauthorized"})
                elif self.path == "/discovery":
                    stand_in.discovered.append(json.loads(body))
                    self._answer(200, {"result": "ok", "data": {"uuid": uuid.uuid4().hex}})
                else:
                    self._answer(404, {"result": "error"})

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.port = int(self.server.server_address[1])
        self.url = f"http://{host}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
