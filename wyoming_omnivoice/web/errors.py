"""HTTP errors as JSON: ``{"error": {"code": ..., "message": ...}}``.

Every refusal and failure of the web server has this shape (the page shows ``message``;
clients branch on ``code``). A bug in a handler costs that one request: it is logged and
answered ``500 internal_error``.
"""

from __future__ import annotations

from aiohttp import web


class ApiError(Exception):
    """A request that cannot be served, with its HTTP status, code and human message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_response(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


def bad_request(code: str, message: str) -> ApiError:
    return ApiError(400, code, message)


def not_found(code: str, message: str) -> ApiError:
    return ApiError(404, code, message)
