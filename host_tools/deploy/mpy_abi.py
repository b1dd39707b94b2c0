"""The .mpy ABI: what a board's MicroPython loads (sys.implementation._mpy) against what a
.mpy file's header says it is (py/persistentcode.h), and why a build cannot be loaded.
"""
from __future__ import annotations

from host_tools.output import FlashError

# py/persistentcode.h: the .mpy header is b"M", version, (arch << 2) | sub-version, small-int
# bits; sys.implementation._mpy packs the board's as version | ((arch << 2) | sub) << 8.
MPY_ARCHS = ("", "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp",
             "armv7emdp", "xtensa", "xtensawin", "rv32imc", "rv64imc")


def decode_sys_mpy(value: int) -> tuple[int, int, int]:
    """sys.implementation._mpy -> (version, sub_version, arch index)."""
    flags = (value >> 8) & 0xFF
    return value & 0xFF, flags & 3, flags >> 2


def decode_mpy_header(data: bytes) -> tuple[int, int, int]:
    """First bytes of a .mpy file -> (version, sub_version, arch index)."""
    if len(data) < 4 or data[0] != ord("M"):
        raise FlashError("not a .mpy file (header %r)" % bytes(data[:4]))
    return data[1], data[2] & 3, data[2] >> 2


def abi_name(version: int, sub: int, arch: int = 0) -> str:
    a = MPY_ARCHS[arch] if arch < len(MPY_ARCHS) else "arch%d" % arch
    return "mpy v%d.%d%s" % (version, sub, " " + a if a else "")


def loadable(board: tuple[int, int, int], header: tuple[int, int, int]) -> str | None:
    """None if a board with ABI `board` loads a file with `header`, else why not.

    As py/persistentcode.c checks it: the version must be equal; a bytecode-only file
    (arch 0, and mpy-cross then writes sub-version 0) loads on any arch; a file with native
    code needs the board's arch and native sub-version."""
    bv, bs, ba = board
    fv, fs, fa = header
    if fv != bv:
        return "the board loads %s, the build is %s" % (abi_name(bv, bs), abi_name(fv, fs, fa))
    if fa and (fa, fs) != (ba, bs):
        return "the build has native code for %s, the board is %s" % (
            abi_name(fv, fs, fa), abi_name(bv, bs, ba) if ba else "bytecode-only")
    return None
