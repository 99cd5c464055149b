"""Check the ``--uri`` address before the model loads: one line that says what to do.

Loading the real model takes minutes on a CPU; a port that is taken, a socket folder that
does not exist, a host name that does not resolve or an IP address of another machine must
not wait until then, nor end in a traceback. :func:`check_listen_address` tries what the
Wyoming server will do later (``asyncio.start_server`` binds every address the host resolves
to, with ``SO_REUSEADDR``; ``asyncio.start_unix_server`` binds the socket path) and raises
:class:`.errors.StartupError` with the fix.

The test socket is closed again at once: the ``wyoming`` server classes take a host and a
port, not a bound socket. Another program could take the port in the minutes the model
loads; the bind at the end would then still fail, with the same kind of message from
:func:`bind_error_message`.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import stat
from pathlib import Path
from urllib.parse import urlparse

from wyoming_omnivoice.errors import StartupError

_LOGGER = logging.getLogger("wyoming_omnivoice")

#: Longest unix socket path Linux accepts (sun_path is 108 bytes with the final NUL).
UNIX_PATH_MAX = 107
PIPER_PORT = 10200


def check_listen_address(uri: str) -> None:
    """Raise StartupError when the server could not listen on ``uri``; stdio is fine."""
    parsed = urlparse(uri)
    if parsed.scheme == "tcp":
        _check_tcp(uri, parsed.hostname or "", parsed.port or 0)
    elif parsed.scheme == "unix":
        _check_unix(uri, Path(parsed.path))


def zeroconf_loopback_warning(uri: str) -> str | None:
    """A warning when ``--zeroconf`` would announce an address only this machine reaches."""
    host = urlparse(uri).hostname or ""
    if not _is_loopback(host):
        return None
    port = urlparse(uri).port
    return (f"--zeroconf with --uri {uri}: the server listens on a loopback address that "
            f"Home Assistant on another machine cannot reach; use --uri tcp://0.0.0.0:{port}")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# --------------------------------------------------------------------------- tcp


def _check_tcp(uri: str, host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise StartupError(
            f"--uri {uri}: cannot resolve the host name {host!r} ({err.strerror}); use an "
            f"address of this machine, e.g. --uri tcp://0.0.0.0:{port} for all interfaces"
        ) from None
    not_here: OSError | None = None
    bound = 0
    for family, kind, proto, _name, address in infos:
        with socket.socket(family, kind, proto) as sock:
            if os.name == "posix":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
                sock.listen(1)
            except OSError as err:
                if err.errno != errno.EADDRNOTAVAIL:
                    raise StartupError(bind_error_message(uri, host, port, err)) from None
                not_here = err  # asyncio skips such an address too (e.g. IPv6 disabled)
            else:
                bound += 1
    if not bound and not_here is not None:
        raise StartupError(bind_error_message(uri, host, port, not_here))
    _LOGGER.debug("Listen address %s is free", uri)


def listen_error_message(uri: str, err: OSError) -> str:
    """One line for a failed bind of the real server (tcp or unix)."""
    parsed = urlparse(uri)
    if parsed.scheme == "tcp":
        return bind_error_message(uri, parsed.hostname or "", parsed.port or 0, err)
    return f"--uri {uri}: cannot listen there ({err.strerror or err})"


def bind_error_message(uri: str, host: str, port: int, err: OSError) -> str:
    """One line for a failed TCP bind, with the fix."""
    other = port + 1 if 0 < port < 65535 else PIPER_PORT + 1
    if err.errno == errno.EADDRINUSE:
        owner = (" (Piper's default is 10200)" if port == PIPER_PORT else "")
        return (f"--uri {uri}: port {port} is in use, probably by another Wyoming "
                f"server{owner}; stop it or pick another port with "
                f"--uri tcp://{host}:{other}")
    if err.errno == errno.EADDRNOTAVAIL:
        return (f"--uri {uri}: {host} is not an address of this machine; use "
                f"--uri tcp://0.0.0.0:{port} to listen on all interfaces, or one of this "
                "machine's own addresses")
    if err.errno == errno.EACCES:
        return (f"--uri {uri}: port {port} needs administrator rights; pick a port above "
                f"1023, e.g. --uri tcp://{host}:{PIPER_PORT + 100}")
    return f"--uri {uri}: cannot listen there ({err.strerror or err})"


# --------------------------------------------------------------------------- unix


def _check_unix(uri: str, path: Path) -> None:
    if len(os.fsencode(str(path))) > UNIX_PATH_MAX:
        raise StartupError(f"--uri {uri}: the socket path is longer than {UNIX_PATH_MAX} "
                           "bytes, which Linux does not allow; use a shorter path")
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise StartupError(f"--uri {uri}: the folder {folder} {what}; create it "
                           f"(mkdir -p {folder}) or pick another socket path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StartupError(f"--uri {uri}: the folder {folder} is not writable by this user; "
                           "pick a socket path in a folder you can write to")
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a file, not a socket"
        raise StartupError(f"--uri {uri}: {path} is {kind}; the server would replace it, so "
                           "pick another socket path")
    if _socket_answers(path):
        raise StartupError(f"--uri {uri}: another server is listening on {path}; stop it or "
                           "pick another socket path")
    _LOGGER.debug("The stale socket %s will be replaced (nothing listens on it)", path)


def _socket_answers(path: Path) -> bool:
    """Whether a program accepts connections on the unix socket ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True
