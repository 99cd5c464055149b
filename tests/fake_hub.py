"""A local Hugging Face hub for tests: real huggingface_hub code against a tiny threaded
HTTP server that mimics the hub's ``<repo>/resolve/<revision>/<path>`` URLs (HEAD with the
``X-Repo-Commit`` / ``ETag`` / ``X-Linked-*`` headers huggingface_hub reads, GET with Range)
and the tree listing ``hf download`` asks for. No network is used.

A file's content is bytes, or a :class:`~pathlib.Path` read from disk in pieces (a
real-size model is not held in memory). ``rate`` (bytes per second) serves slowly, as a
household's connection would, so a download's progress can be watched.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: Bytes written at a time (and between the pauses of a slow hub).
PIECE = 256 * 1024


def git_blob_sha1(data: bytes) -> str:
    """What ``git hash-object`` prints for these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@cache
def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while piece := handle.read(1 << 22):
            digest.update(piece)
    return digest.hexdigest()


def content_length(content: bytes | Path) -> int:
    return content.stat().st_size if isinstance(content, Path) else len(content)


def content_sha256(content: bytes | Path) -> str:
    if isinstance(content, Path):
        return _file_sha256(content)
    return hashlib.sha256(content).hexdigest()


@dataclass
class Repo:
    name: str
    revision: str
    files: dict[str, bytes | Path] = field(default_factory=dict)


# --------------------------------------------------------------------------- fake hub


class FakeHub:
    """Serves repositories over HTTP the way huggingface_hub expects the hub to."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str, str | None]] = []
        self.cut_once: set[str] = set()  # paths whose next GET stops half way
        self.missing: set[str] = set()  # paths answered with 404
        self.bad_etag: set[str] = set()  # paths whose ETag is not the hash of the bytes
        self.rate: float | None = None  # bytes per second served (None: as fast as it can)
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_HEAD(self) -> None:
                self._serve(body=False)

            def do_GET(self) -> None:
                self._serve(body=True)

            def _serve(self, *, body: bool) -> None:
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                with hub._lock:
                    hub.requests.append((self.command, path, self.headers.get("Range")))
                if path.startswith("/api/models/"):
                    self._tree(path)
                    return
                found = hub.lookup(path)
                if found is None:
                    self._not_found()
                    return
                repo, file_path, data = found
                # Like the hub: files in Git LFS have their SHA-256 as ETag, files kept in
                # git itself (tokenizer.json) their git blob SHA-1.
                lfs = file_path.endswith((".onnx", ".data"))
                if isinstance(data, Path):
                    etag = content_sha256(data)
                else:
                    etag = hashlib.sha256(data).hexdigest() if lfs else git_blob_sha1(data)
                if file_path in hub.bad_etag:
                    other = b"other" + (data if isinstance(data, bytes) else b"")
                    etag = hashlib.sha256(other).hexdigest() if lfs else git_blob_sha1(other)
                start = 0
                rng = self.headers.get("Range")
                if body and rng and rng.startswith("bytes="):
                    start = int(rng[len("bytes="):].split("-")[0])
                size = content_length(data)
                length = size - start
                self.send_response(206 if start else 200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(length))
                self.send_header("X-Repo-Commit", repo.revision)
                self.send_header("ETag", f'"{etag}"')
                self.send_header("X-Linked-Etag", f'"{etag}"')
                self.send_header("X-Linked-Size", str(size))
                self.send_header("Accept-Ranges", "bytes")
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
                if not body:
                    self.end_headers()
                    return
                cut = False
                with hub._lock:
                    if file_path in hub.cut_once and not start:
                        hub.cut_once.discard(file_path)
                        cut = True
                if cut:
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self._send(data, start, length // 2)
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.end_headers()
                self._send(data, start, length)

            def _send(self, data: bytes | Path, start: int, length: int) -> None:
                """``length`` bytes from ``start``, piece by piece (at ``hub.rate``)."""
                began = time.monotonic()
                sent = 0
                handle = data.open("rb") if isinstance(data, Path) else None
                try:
                    if handle is not None:
                        handle.seek(start)
                    while sent < length:
                        size = min(PIECE, length - sent)
                        if handle is not None:
                            piece = handle.read(size)
                        else:
                            assert isinstance(data, bytes)
                            piece = data[start + sent:start + sent + size]
                        self.wfile.write(piece)
                        sent += len(piece)
                        if hub.rate:
                            ahead = began + sent / hub.rate - time.monotonic()
                            if ahead > 0:
                                time.sleep(ahead)
                finally:
                    if handle is not None:
                        handle.close()

            def _tree(self, path: str) -> None:
                """The file listing `hf download` (snapshot_download) asks for."""
                for repo in hub.repos.values():
                    if path.startswith(f"/api/models/{repo.name}/tree/{repo.revision}"):
                        listing = [
                            {
                                "type": "file", "path": name, "size": content_length(data),
                                "oid": git_blob_sha1(data) if isinstance(data, bytes)
                                else content_sha256(data)[:40],
                                "lfs": {"oid": content_sha256(data),
                                        "size": content_length(data), "pointerSize": 134},
                            }
                            for name, data in repo.files.items()
                        ]
                        body = json.dumps(listing).encode()
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                self._not_found()

            def _not_found(self) -> None:
                message = b"Entry not found"
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("X-Error-Message", "Entry not found")
                self.send_header("Content-Length", str(len(message)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(message)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def lookup(self, url_path: str) -> tuple[Repo, str, bytes | Path] | None:
        for repo in self.repos.values():
            prefix = f"/{repo.name}/resolve/{repo.revision}/"
            if url_path.startswith(prefix):
                file_path = url_path[len(prefix):]
                if file_path in self.missing or file_path not in repo.files:
                    return None
                return repo, file_path, repo.files[file_path]
        return None

    def gets(self, file_path: str | None = None) -> list[tuple[str, str, str | None]]:
        with self._lock:
            return [
                r for r in self.requests
                if r[0] == "GET" and (file_path is None or r[1].endswith("/" + file_path))
            ]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
