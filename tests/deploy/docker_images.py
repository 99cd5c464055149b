"""Building and running the images with a real Docker daemon, where base images cannot be
pulled: a Debian base made with ``debootstrap`` and ``docker import``, cached between runs.

Used by ``tests/deploy/test_docker_images.py`` and by hand::

    python -m tests.deploy.docker_images          # make (or find) the bases, print their tags

The steps (docs/deployment.md, "Building the images without a registry"):

1. :func:`debian_base`: ``debootstrap --variant=minbase`` into a folder, packed once into
   ``CACHE/debian-RELEASE-minbase.tar`` (a few minutes; it never changes) and imported as
   ``local/debian:RELEASE``. Later runs import the tarball, or find the tag.
2. :func:`python_base`: Python, ``python3-venv`` and ``ca-certificates`` on it, **then** the
   host's CA bundle over the image's (installing ``ca-certificates`` rewrites the bundle, and
   pip behind an intercepting proxy needs the host's), and an ``/etc/pip.conf`` naming it.
   Tagged by a hash of its recipe and the bundle, so either changing makes a new one.
3. :func:`build`: ``DOCKER_BUILDKIT=1`` with Debian's own ``/usr/bin/docker`` (a newer
   client first on the PATH may want the buildx plugin, which Debian does not package; the
   legacy builder refuses ``COPY --chmod``).

``CACHE`` is ``$OMNIVOICE_DOCKER_CACHE``, else ``$XDG_CACHE_HOME/wyoming-omnivoice/docker``
(``~/.cache/...``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEBIAN_MIRROR = "http://deb.debian.org/debian"
RELEASE = "bookworm"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")

#: The Python base: what ``python:3.x-slim`` gives the CPU image, from Debian's packages.
PYTHON_BASE_DOCKERFILE = """\
ARG BASE
FROM ${BASE}
RUN apt-get update \\
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
# After ca-certificates: its installation regenerates the bundle.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN printf '[global]\\ncert = /etc/ssl/certs/ca-certificates.crt\\n' > /etc/pip.conf
"""

#: Home Assistant's add-on base (``ghcr.io/home-assistant/amd64-base-debian:trixie``) cannot
#: be pulled here. The pieces of it that the add-on uses, each stood in for or not:
#:
#: - Debian trixie, bash and apt: the same release from debootstrap (``debian_base``);
#: - ``ca-certificates``: installed, then the host's bundle over it (as in the Python base);
#: - s6-overlay's ``/command/with-contenv``, the interpreter of the start script
#:   (``#!/command/with-contenv bash``): a script that runs its arguments. The real one
#:   first loads the container's environment saved by ``/init``; without ``/init`` the
#:   process already has it;
#: - s6-overlay's ``/init`` and s6-rc (the ``omnivoice`` longrun, its ``finish``, the
#:   ``discovery`` oneshot): not stood in; the container runs the start script itself;
#: - bashio: not installed (the add-on's scripts do not use it).
#:
#: It carries the label ``STAND_IN_LABEL`` so that it is never taken for the real one.
ADDON_RELEASE = "trixie"
STAND_IN_LABEL = "org.wyoming-omnivoice.stand-in"
ADDON_BASE_DOCKERFILE = f"""\
ARG BASE
FROM ${{BASE}}
LABEL {STAND_IN_LABEL}=true
RUN apt-get update \\
    && apt-get install -y --no-install-recommends ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN printf '[global]\\ncert = /etc/ssl/certs/ca-certificates.crt\\n' > /etc/pip.conf \\
    && mkdir -p /command \\
    && printf '#!/bin/sh\\n# Stand-in for s6-overlay: run the arguments.\\nexec "$@"\\n' \\
        > /command/with-contenv \\
    && chmod 0755 /command/with-contenv
"""


def cache_dir() -> Path:
    """Where the debootstrap tarballs are kept between runs."""
    explicit = os.environ.get("OMNIVOICE_DOCKER_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wyoming-omnivoice" / "docker"


def docker_client() -> str | None:
    """Debian's ``/usr/bin/docker`` (builds with BuildKit without buildx), else any."""
    if Path("/usr/bin/docker").exists():
        return "/usr/bin/docker"
    return shutil.which("docker")


def docker(*args: str, check: bool = True, timeout: float = 600,
           stdin: Path | None = None, cwd: Path | None = None
           ) -> subprocess.CompletedProcess[str]:
    """Run the docker client (``stdin``: a file fed to it, ``cwd``: where); on failure
    (``check``) raise with its output."""
    client = docker_client()
    if client is None:
        raise RuntimeError("no docker client installed")
    env = dict(os.environ, DOCKER_BUILDKIT="1")
    with open(stdin or os.devnull, "rb") as source:
        result = subprocess.run([client, *args], stdin=source, capture_output=True,
                                text=True, timeout=timeout, env=env, cwd=cwd)
    if check and result.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args[:3])} failed ({result.returncode}):\n"
                           f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def daemon_problem() -> str | None:
    """Why no Docker daemon can be used here, or None when one answers."""
    if docker_client() is None:
        return "no docker client (Debian: apt-get install docker.io; .ci/run does it as root)"
    try:
        result = docker("version", "--format", "{{.Server.Version}}", check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"docker info failed: {err}"
    if result.returncode != 0:
        return ("no Docker daemon answers (start dockerd as root; .ci/run does): "
                + (result.stderr.strip().splitlines() or ["?"])[-1])
    return None


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, check=False, timeout=60).returncode == 0


def image_size(tag: str) -> int:
    """The image's size in bytes, as ``docker images`` shows it."""
    return int(docker("image", "inspect", "--format", "{{.Size}}", tag).stdout.strip())


def debian_base(release: str = RELEASE) -> str:
    """``local/debian:RELEASE``, made with debootstrap once and cached as a tarball."""
    tag = f"local/debian:{release}"
    if image_exists(tag):
        return tag
    tarball = cache_dir() / f"debian-{release}-minbase.tar"
    if not tarball.exists():
        _debootstrap(release, tarball)
    docker("import", "-", tag, stdin=tarball, timeout=600)
    return tag


def _debootstrap(release: str, tarball: Path) -> None:
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is missing (Debian: apt-get install debootstrap)")
    if os.geteuid() != 0:
        raise RuntimeError("debootstrap needs root")
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tarball.parent) as work:
        rootfs = Path(work) / "rootfs"
        subprocess.run(["debootstrap", "--variant=minbase", release, str(rootfs),
                        DEBIAN_MIRROR], check=True, capture_output=True, timeout=1800)
        partial = tarball.with_suffix(".partial")
        subprocess.run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], check=True,
                       timeout=600)
        partial.replace(tarball)


def _base_with_bundle(name: str, release: str, dockerfile: str, ca_bundle: Path) -> str:
    """A base built from ``dockerfile`` on ``local/debian:RELEASE`` with the CA bundle in
    its context; tagged by a hash of the recipe and the bundle."""
    debian = debian_base(release)
    bundle = ca_bundle.read_bytes()
    digest = hashlib.sha256(dockerfile.encode() + b"\0" + bundle).hexdigest()[:12]
    tag = f"local/{name}:{release}-{digest}"
    if not image_exists(tag):
        with tempfile.TemporaryDirectory() as context:
            (Path(context) / "Dockerfile").write_text(dockerfile)
            (Path(context) / "ca-certificates.crt").write_bytes(bundle)
            build(Path(context) / "Dockerfile", tag, Path(context), {"BASE": debian})
    return tag


def python_base(ca_bundle: Path = HOST_CA_BUNDLE) -> str:
    """The Debian base with Python and the host's CA bundle: the CPU image's base."""
    return _base_with_bundle("omnivoice-python", RELEASE, PYTHON_BASE_DOCKERFILE, ca_bundle)


def addon_base(ca_bundle: Path = HOST_CA_BUNDLE) -> str:
    """The stand-in for Home Assistant's add-on base (see ``ADDON_BASE_DOCKERFILE``)."""
    return _base_with_bundle("omnivoice-addon-base", ADDON_RELEASE, ADDON_BASE_DOCKERFILE,
                             ca_bundle)


def stand_in_as(stand_in: str, name: str) -> None:
    """Tag the stand-in base under the real base's name (build.yaml's ``build_from``), so
    that the add-on builds with that name unchanged: without ``--pull`` BuildKit takes a
    local image of the name. Never over a real image of that name (one without the
    stand-in's label): the add-on image test runs the start script without s6's ``/init``,
    which only the stand-in allows."""
    found = docker("image", "inspect", "--format",
                   f'{{{{index .Config.Labels "{STAND_IN_LABEL}"}}}}', name,
                   check=False, timeout=60)
    if found.returncode == 0 and found.stdout.strip() != "true":
        raise RuntimeError(f"{name} here is not the stand-in (no {STAND_IN_LABEL} label): "
                           "remove it (docker image rm) to run the add-on image test")
    docker("tag", stand_in, name, timeout=60)


def supervisor_build(command: list[str], context: Path, *, timeout: float = 1800) -> Built:
    """Run the Supervisor's ``docker buildx build ...`` in ``context``, as the Debian client
    can: ``docker build`` with BuildKit (same flags; Debian packages no buildx plugin), and
    without ``--pull``, which would fetch the base from its registry (out of reach here)
    instead of the stand-in tagged under its name."""
    if command[:3] != ["docker", "buildx", "build"]:
        raise ValueError(f"not a buildx build: {command[:3]}")
    args = ["build", *(word for word in command[3:] if word != "--pull")]
    tag = command[command.index("--tag") + 1]
    before = _image_id(tag)
    start = time.monotonic()
    docker(*args, timeout=timeout, cwd=context)
    seconds = time.monotonic() - start
    if before and before != _image_id(tag):
        docker("image", "rm", before, check=False, timeout=120)
    return Built(tag, seconds, image_size(tag))


@dataclass
class Built:
    """An image built: its tag, the build's wall time and the image's size."""

    tag: str
    seconds: float
    size_bytes: int


def build(dockerfile: Path, tag: str, context: Path, build_args: dict[str, str],
          *, network_host: bool = False, timeout: float = 1800) -> Built:
    """``docker build`` with BuildKit; the build's output is in the error when it fails."""
    args = ["build", "-f", str(dockerfile), "-t", tag, "--progress", "plain"]
    for key, value in build_args.items():
        args += ["--build-arg", f"{key}={value}"]
    if network_host:
        args += ["--network", "host"]
    before = _image_id(tag)
    start = time.monotonic()
    docker(*args, str(context), timeout=timeout)
    seconds = time.monotonic() - start
    if before and before != _image_id(tag):
        # The tag moved: the image it named would stay behind, nameless, at every build.
        docker("image", "rm", before, check=False, timeout=120)
    return Built(tag, seconds, image_size(tag))


def _image_id(tag: str) -> str:
    result = docker("image", "inspect", "--format", "{{.Id}}", tag, check=False, timeout=60)
    return result.stdout.strip() if result.returncode == 0 else ""


def bridge_gateway() -> str:
    """The host's address on Docker's default bridge (``host-gateway`` in a container)."""
    return docker("network", "inspect", "--format", "{{(index .IPAM.Config 0).Gateway}}",
                  "bridge").stdout.strip()


def container_state(container: str) -> dict[str, object]:
    """``docker inspect``'s ``State`` of a container (``Health`` included when it has one)."""
    state = json.loads(docker("inspect", "--format", "{{json .State}}", container).stdout)
    assert isinstance(state, dict)
    return state


def published_port(container: str, port: int = 10200) -> int:
    """The host port that ``-p 127.0.0.1::PORT`` gave the container's ``port``."""
    line = docker("port", container, f"{port}/tcp").stdout.strip().splitlines()[0]
    return int(line.rsplit(":", 1)[1])


def remove(*containers: str) -> None:
    """Remove containers, running or not, ignoring the ones already gone."""
    for container in containers:
        docker("rm", "-f", container, check=False, timeout=120)


def main() -> None:
    problem = daemon_problem()
    if problem:
        raise SystemExit(problem)
    start = time.monotonic()
    print(f"{python_base()} ready after {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
