#!/usr/bin/env python3
"""The wheel kit of the GPU check: pinned wheels packed into parts a device call can carry.

The GPU machine (H200, Python 3.12, PyTorch with CUDA 13 libraries, onnxruntime 1.30 CPU
only, no network) takes 64 MiB a call, the working tree included (about 22 MiB). The
onnxruntime-gpu wheel is 247 MB; with only sm_90 kernels kept (``fatbin.py``) and xz it
is about 59 MB, so it travels as two parts over two calls.

    python -m tools.gpu.kit build WHEEL_DIR KIT_DIR    # here: after tools/gpu/wheels.sh
    python -m tools.gpu.kit unpack-py KIT_DIR SITE     # there, call 1: the small wheels
    python -m tools.gpu.kit stash KIT_DIR STORE        # there: keep a part outside the repo
    python -m tools.gpu.kit join STORE SITE            # there, call 2: parts -> onnxruntime

``build`` checks every wheel against the sha256 pinned below, installs them into a staging
tree (a wheel is a zip: unpacking it is the install, no pip needed there), strips the CUDA
provider, packs ``py.tar.xz`` (small wheels, call 1) and ``ort.tar.xz`` split into
``ort.part-1`` (call 1) and ``ort.part-2`` (call 2), each folder with a ``SHA256SUMS``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from tools.gpu import fatbin

#: file name -> sha256, as downloaded from PyPI by wheels.sh (cp312, manylinux x86_64).
#: The latest onnxruntime-gpu on PyPI (1.31.1; the CPU tests run onnxruntime 1.32.0, which
#: has no GPU build yet): the version pyproject's [gpu] extra requires.
ORT_WHEEL = "onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl"
PINS = {
    # onnxruntime-gpu >= 1.27 on PyPI is built for CUDA 13 (Requires-Dist nvidia-cuda-runtime~=13.0)
    ORT_WHEEL: "05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7",
    # upstream, for the side-by-side, and what it imports that the machine lacks
    "omnivoice-0.2.1-py3-none-any.whl":
        "23f113ef51116a16308b55c4c2ac9c08efca7dfb594802f5c8adfb7523313ccc",
    "pydub-0.25.1-py2.py3-none-any.whl":
        "65617e33033874b59d87db603aa1ed450633288aefead953b30bded59cb599a6",
    "soundfile-0.14.0-py2.py3-none-manylinux_2_28_x86_64.whl":
        "1e38bac1853412871318e82a1ba69a8be677619b56025bbfcccdb41b6cafe82d",
    "cffi-2.1.1-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.whl":
        "c1453022f490d2459a11819d83ad1d586e9ff65a12ac3e705ffebd46d3685dcf",
    "pycparser-3.12-py3-none-any.whl":
        "a076f3f489b39b43ed13563a1dafe42447445bec2e294154ec5c57fcdda4c85e",
    # our text normalisation (engine imports them); docopt is only num2words' command line
    "num2words-0.5.14-py3-none-any.whl":
        "1c8e5b00142fc2966fd8d685001e36c4a9911e070d1b120e1beb721fa1edb33d",
    "cn2an-0.5.24-py3-none-any.whl":
        "3d57d862a56133070ba6a737b8095bfc94716b41b7684e7a98d2d5b049495db7",
    "proces-0.1.7-py3-none-any.whl":
        "308325bbc96877263f06e57e5e9c760c4b42cc722887ad60be6b18fc37d68762",
    # the server and its client, for the end-to-end section (benchmarks/server_gpu.py)
    "wyoming-1.10.2-py3-none-any.whl":
        "08aec17ccad4d72fc3f919ab741beacf3f23a1df24c8b9a317ebc6e02d2b227c",
}
#: NVIDIA's cuobjdump, to check the stripped library (not carried; see check_cubins).
CUOBJDUMP_WHEEL = ("nvidia_cuda_cuobjdump-13.5.37-py3-none-manylinux2014_x86_64."
                   "manylinux_2_17_x86_64.whl")
CUOBJDUMP_SHA256 = "38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58"
CUDA_PROVIDER_SO = "onnxruntime/capi/libonnxruntime_providers_cuda.so"
#: Not needed by the Python API (only C API users load libonnxruntime.so; no TensorRT there).
ORT_DROPPED = ("onnxruntime/capi/libonnxruntime.so.1.31.1",
               "onnxruntime/capi/libonnxruntime_providers_tensorrt.so")
KEEP_ARCHS = {90}  # H200 / H100: sm_90
PARTS = 2
SUMS = "SHA256SUMS"


class KitError(RuntimeError):
    """A wheel or part is missing or does not match its sum."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_pins(wheel_dir: Path, pins: dict[str, str] = PINS) -> None:
    for name, want in pins.items():
        path = wheel_dir / name
        if not path.is_file():
            raise KitError(f"{path} is missing: run tools/gpu/wheels.sh first")
        got = sha256_of(path)
        if got != want:
            raise KitError(f"{path}: sha256 {got}, pinned {want}")


def unpack_wheel(wheel: Path, site: Path, drop: tuple[str, ...] = ()) -> None:
    """Install a wheel by unpacking it (no entry points or compiled bytecode needed here)."""
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.filename in drop:
                continue
            target = archive.extract(info, site)
            mode = info.external_attr >> 16
            if mode:
                Path(target).chmod(mode & 0o777)


def pack(folder: Path, target: Path) -> None:
    """A reproducible tar.xz of ``folder``'s contents (sorted names, no times or owners,
    modes 0755 for folders and executables, else 0644)."""
    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime = 0
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755 if info.isdir() or info.mode & 0o100 else 0o644
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(folder)), recursive=False,
                        filter=clean)
    target.write_bytes(lzma.compress(buffer.getvalue(), preset=9))


def split(archive: Path, folders: list[Path], sizes: list[int] | None = None) -> list[Path]:
    """Cut ``archive`` into one ``<name>.part-N`` per folder, each folder with its SHA256SUMS
    (the sum of each part there, and of the whole archive)."""
    data = archive.read_bytes()
    if sizes is None:
        step = -(-len(data) // len(folders))
        sizes = [step] * len(folders)
    parts: list[Path] = []
    at = 0
    for index, (folder, size) in enumerate(zip(folders, sizes, strict=True), start=1):
        chunk = data[at:] if index == len(folders) else data[at:at + size]
        at += len(chunk)
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f"{archive.name}.part-{index}"
        part.write_bytes(chunk)
        parts.append(part)
    whole = hashlib.sha256(data).hexdigest()
    for folder, part in zip(folders, parts, strict=True):
        add_sum(folder, part.name, sha256_of(part))
        add_sum(folder, f"{archive.name} ({len(parts)} parts)", whole)
    return parts


def add_sum(folder: Path, name: str, digest: str) -> None:
    sums = folder / SUMS
    lines = [ln for ln in sums.read_text().splitlines() if not ln.endswith(f"  {name}")] \
        if sums.exists() else []
    sums.write_text("\n".join([*lines, f"{digest}  {name}"]) + "\n")


def read_sums(folder: Path) -> dict[str, str]:
    sums: dict[str, str] = {}
    for line in (folder / SUMS).read_text().splitlines():
        digest, _, name = line.partition("  ")
        sums[name] = digest
    return sums


def verify_folder(folder: Path) -> dict[str, str]:
    """Check every file named in ``folder/SHA256SUMS`` that lies there; returns the sums."""
    sums = read_sums(folder)
    for name, digest in sums.items():
        path = folder / name
        if path.is_file() and sha256_of(path) != digest:
            raise KitError(f"{path} does not match its sha256 (carried incompletely?)")
    return sums


def join(store: Path, stem: str) -> bytes:
    """The archive ``stem`` from its parts in ``store``, checked part by part and whole."""
    sums = verify_folder(store)
    wholes = [(name, d) for name, d in sums.items() if name.startswith(f"{stem} (")]
    if not wholes:
        raise KitError(f"{store}/{SUMS} names no {stem}")
    name, whole = wholes[0]
    count = int(name.split("(")[1].split()[0])
    missing = [f"{stem}.part-{i}" for i in range(1, count + 1)
               if not (store / f"{stem}.part-{i}").is_file()]
    if missing:
        raise KitError(f"{', '.join(missing)} not in {store}: carry every part (call 1 then "
                       "call 2 on the same warm machine, see tools/gpu/check.sh)")
    data = b"".join((store / f"{stem}.part-{i}").read_bytes() for i in range(1, count + 1))
    if hashlib.sha256(data).hexdigest() != whole:
        raise KitError(f"{stem}: the joined parts do not match the archive's sha256")
    return data


def extract(data: bytes, site: Path) -> None:
    site.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(data)), mode="r") as archive:
        archive.extractall(site, filter="tar")


def stash(kit: Path, store: Path) -> list[str]:
    """Copy the parts and sums of a carried kit folder to ``store`` (outside the repo)."""
    verify_folder(kit)
    store.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in sorted(kit.iterdir()):
        if path.name == SUMS:
            for name, digest in read_sums(kit).items():
                add_sum(store, name, digest)
        elif ".part-" in path.name:
            shutil.copyfile(path, store / path.name)
            copied.append(path.name)
    return copied


def cubins(cuobjdump: Path, library: Path, arch: str) -> list[str]:
    """sha256 of each ``arch`` cubin NVIDIA's cuobjdump extracts from ``library``, sorted."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([str(cuobjdump.resolve()), "--extract-elf", "all", str(library.resolve())],
                       cwd=folder, check=True, capture_output=True)
        return sorted(sha256_of(p) for p in Path(folder).glob(f"*.{arch}.cubin"))


def check_cubins(wheel_dir: Path, original: Path, stripped: Path) -> None:
    """NVIDIA's cuobjdump must read the stripped library and find every sm_90 cubin of the
    original, byte for byte."""
    wheel = wheel_dir / CUOBJDUMP_WHEEL
    if not wheel.is_file():
        print(f"(no {wheel.name}: stripped library not checked with cuobjdump)")
        return
    if sha256_of(wheel) != CUOBJDUMP_SHA256:
        raise KitError(f"{wheel}: sha256 differs from the pin")
    tool_dir = wheel_dir / "cuobjdump"
    unpack_wheel(wheel, tool_dir)
    tool = tool_dir / "nvidia" / "cu13" / "bin" / "cuobjdump"
    tool.chmod(0o755)
    before, after = cubins(tool, original, "sm_90a"), cubins(tool, stripped, "sm_90a")
    if not before or before != after:
        raise KitError(f"stripped CUDA provider: {len(after)} sm_90a cubins, original "
                       f"{len(before)}, or their bytes differ")
    print(f"cuobjdump: the stripped CUDA provider holds all {len(after)} sm_90a cubins of "
          "the original, byte for byte")


def build_py(wheel_dir: Path, call1: Path) -> None:
    """``call1/py.tar.xz``: every pinned wheel but onnxruntime-gpu, unpacked and packed (the
    ort parts stay as they are: ``build-py`` after a new small pin costs seconds)."""
    check_pins(wheel_dir, {k: v for k, v in PINS.items() if k != ORT_WHEEL})
    with tempfile.TemporaryDirectory() as folder:
        for name in PINS:
            if name != ORT_WHEEL:
                unpack_wheel(wheel_dir / name, Path(folder))
        call1.mkdir(parents=True, exist_ok=True)
        pack(Path(folder), call1 / "py.tar.xz")
    add_sum(call1, "py.tar.xz", sha256_of(call1 / "py.tar.xz"))


def build(wheel_dir: Path, kit: Path) -> None:
    check_pins(wheel_dir)
    staging = kit / "staging"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(kit / "call1", ignore_errors=True)
    shutil.rmtree(kit / "call2", ignore_errors=True)
    ort_site = staging / "ort"
    unpack_wheel(wheel_dir / ORT_WHEEL, ort_site, drop=ORT_DROPPED)
    so = ort_site / CUDA_PROVIDER_SO
    original = staging / "original_cuda_provider.so"
    so.rename(original)
    data = bytearray(original.read_bytes())
    stats = fatbin.strip(data, KEEP_ARCHS)
    so.write_bytes(bytes(data))
    so.chmod(original.stat().st_mode & 0o777)
    del data
    check_cubins(wheel_dir, original, so)
    original.unlink()
    kept = sum(stats["kept"].values()) / 1e6
    dropped = sum(stats["dropped"].values()) / 1e6
    print(f"CUDA provider: kept {kept:.1f} MB of sm_90 kernels, zeroed {dropped:.1f} MB")
    pack(ort_site, staging / "ort.tar.xz")
    call1, call2 = kit / "call1", kit / "call2"
    build_py(wheel_dir, call1)
    # even calls: part 1 plus the small wheels weigh what part 2 weighs
    total = (staging / "ort.tar.xz").stat().st_size
    first = (total - (call1 / "py.tar.xz").stat().st_size) // 2
    split(staging / "ort.tar.xz", [call1, call2], [first, total - first])
    shutil.rmtree(staging)
    for folder in (call1, call2):
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"{folder}: {size / 2**20:.1f} MiB ({', '.join(sorted(read_sums(folder)))})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("wheel_dir", type=Path)
    b.add_argument("kit", type=Path)
    bp = sub.add_parser("build-py", help="only call1/py.tar.xz (after a new small pin)")
    bp.add_argument("wheel_dir", type=Path)
    bp.add_argument("kit", type=Path)
    u = sub.add_parser("unpack-py")
    u.add_argument("kit", type=Path)
    u.add_argument("site", type=Path)
    s = sub.add_parser("stash")
    s.add_argument("kit", type=Path)
    s.add_argument("store", type=Path)
    sub.add_parser("requirements", help="FILE REQUIREMENT per pinned wheel (wheels.sh)")
    j = sub.add_parser("join")
    j.add_argument("store", type=Path)
    j.add_argument("site", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "requirements":
            for name in [*PINS, CUOBJDUMP_WHEEL]:
                dist, version = name.split("-")[:2]
                print(f"{name} {dist.replace('_', '-')}=={version}")
        elif args.command == "build":
            build(args.wheel_dir, args.kit)
        elif args.command == "build-py":
            build_py(args.wheel_dir, args.kit / "call1")
            print(f"{args.kit / 'call1' / 'py.tar.xz'} rebuilt")
        elif args.command == "unpack-py":
            verify_folder(args.kit)
            extract((args.kit / "py.tar.xz").read_bytes(), args.site)
            print(f"small wheels unpacked into {args.site}")
        elif args.command == "stash":
            print(f"stashed {stash(args.kit, args.store)} in {args.store}")
        else:
            extract(join(args.store, "ort.tar.xz"), args.site)
            print(f"onnxruntime-gpu unpacked into {args.site}")
    except KitError as err:
        print(f"gpu_kit: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
