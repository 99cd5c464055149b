#!/usr/bin/env python3
"""Keep only the GPU code for the wanted architectures in a shared library's CUDA fat binaries.

    python -m tools.gpu.fatbin IN.so OUT.so [--keep 90]      # prints what it kept and dropped

A CUDA library carries its kernels in the ELF section ``.nv_fatbin``: a run of fat binaries,
each a 16-byte header (magic 0xBA55ED50, version, header size, size of the entries) followed by
entries (a header with kind 1 = PTX or 2 = ELF/SASS, its own header size, payload size and the
target architecture, e.g. 90 for sm_90, then the payload). The runtime registers each fat binary
by its start address and walks its entries, choosing the one for the device.

This tool rewrites every fat binary that holds an entry for a kept architecture so that it
holds only those entries: they are moved to the front, the header's size is updated, and the
bytes freed at the end are zeroed. Start addresses, section sizes and everything outside
``.nv_fatbin`` stay as they are, so the library loads as before on the kept architectures, and
the zeroed bytes compress to almost nothing (onnxruntime-gpu's CUDA provider: 272 MB, of which
210 MB are kernels for six architectures). A fat binary with no entry for a kept architecture is
left untouched. Pure Python, no CUDA needed; facts about the format come from reading the bytes
(see ``scan``), not from other tools' code.
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

FATBIN_MAGIC = 0xBA55ED50
KIND_NAMES = {1: "ptx", 2: "elf"}


@dataclass(frozen=True)
class Entry:
    offset: int  # from the start of the section
    kind: int
    arch: int
    length: int  # entry header + payload


@dataclass(frozen=True)
class FatBinary:
    offset: int  # from the start of the section
    header_size: int
    entries: tuple[Entry, ...]

    @property
    def end(self) -> int:
        return self.offset + self.header_size + sum(e.length for e in self.entries)


def find_section(data: bytes | bytearray, name: str) -> tuple[int, int]:
    """(file offset, size) of the named section of a little-endian ELF64 file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian 64-bit ELF file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    names_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for index in range(shnum):
        header = shoff + index * shentsize
        name_at = names_off + struct.unpack_from("<I", data, header)[0]
        section_name = bytes(data[name_at:data.index(b"\0", name_at)]).decode()
        if section_name == name:
            offset, size = struct.unpack_from("<QQ", data, header + 0x18)
            return int(offset), int(size)
    raise ValueError(f"no section {name}")


def scan(section: bytes | bytearray) -> list[FatBinary]:
    """The fat binaries of a ``.nv_fatbin`` section (they start 8-byte aligned)."""
    found: list[FatBinary] = []
    pos = 0
    while pos + 16 <= len(section):
        magic, _version, header_size, size = struct.unpack_from("<IHHQ", section, pos)
        if magic != FATBIN_MAGIC:
            pos += 8 - pos % 8
            continue
        entries: list[Entry] = []
        at, end = pos + header_size, pos + header_size + size
        while at < end:
            kind, _flags16, entry_header, payload = struct.unpack_from("<HHIQ", section, at)
            arch = struct.unpack_from("<I", section, at + 28)[0]
            length = entry_header + payload
            if kind not in KIND_NAMES or length <= 0 or at + length > end:
                raise ValueError(f"unexpected fat binary entry at section offset {at:#x}")
            entries.append(Entry(at, kind, arch, length))
            at += length
        found.append(FatBinary(pos, header_size, tuple(entries)))
        pos = end
    return found


def strip(data: bytearray, keep: set[int]) -> dict[str, Counter[str]]:
    """Rewrite ``data`` (a whole ELF file) in place; returns bytes kept/dropped per arch."""
    sec_off, sec_size = find_section(data, ".nv_fatbin")
    section = data[sec_off:sec_off + sec_size]
    stats: dict[str, Counter[str]] = {"kept": Counter(), "dropped": Counter(),
                                      "untouched": Counter()}
    for fatbin in scan(section):
        wanted = [e for e in fatbin.entries if e.arch in keep]
        if not wanted:
            for e in fatbin.entries:
                stats["untouched"][f"{KIND_NAMES[e.kind]}_sm{e.arch}"] += e.length
            continue
        body = b"".join(bytes(section[e.offset:e.offset + e.length]) for e in wanted)
        start = fatbin.offset + fatbin.header_size
        section[start:start + len(body)] = body
        section[start + len(body):fatbin.end] = bytes(fatbin.end - start - len(body))
        struct.pack_into("<Q", section, fatbin.offset + 8, len(body))
        for e in fatbin.entries:
            bucket = "kept" if e.arch in keep else "dropped"
            stats[bucket][f"{KIND_NAMES[e.kind]}_sm{e.arch}"] += e.length
    data[sec_off:sec_off + sec_size] = section
    return stats


def verify(data: bytes | bytearray, keep: set[int]) -> int:
    """Number of fat binaries that still hold an entry for another arch next to a kept one."""
    sec_off, sec_size = find_section(data, ".nv_fatbin")
    mixed = 0
    for fatbin in scan(data[sec_off:sec_off + sec_size]):
        archs = {e.arch for e in fatbin.entries}
        if archs & keep and archs - keep:
            mixed += 1
    return mixed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--keep", default="90", help="comma-separated architectures (90 = sm_90)")
    args = parser.parse_args(argv)
    keep = {int(a) for a in args.keep.split(",")}
    data = bytearray(args.source.read_bytes())
    stats = strip(data, keep)
    if verify(data, keep):
        print("fatbin: stripping left mixed fat binaries", file=sys.stderr)
        return 1
    args.target.write_bytes(bytes(data))
    for bucket, counter in stats.items():
        listed = ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(counter.items()))
        print(f"{bucket}: {listed or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
