"""The emulated Raspberry Pi Pico (rp2040js under Node, stock MicroPython): host side.

`host_tools.emu.vboard` runs it as board kind "pico" (`pitboss board start --kind pico`,
`--port pico`); this package finds and checks its images and talks to its control socket.
The Node side is board.mjs and its modules in this folder (see DEVELOPERS.md, "Pico board").
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import host_tools
from host_tools.emu import sidechannel
from host_tools.output import BoardError

HERE = Path(__file__).resolve().parent
BOARD_MJS = HERE / "board.mjs"
UF2_NAME = "RPI_PICO-v1.27.0.uf2"  # the stock image (../shared/firmware/)
# The image the emulated Pico boots by default: the pitboss image, built from its recipe
# in the repository (boards/rp2/PITBOSS_PICO/build.sh) and committed beside it, pinned by
# the SHA256SUMS there. `--uf2 stock` / PITBOSS_PICO_UF2=stock boots the stock image.
# (Under host_tools.REPO: the checkout, or the wheel's tree, host_tools/_tree.)
PITBOSS_UF2 = Path(host_tools.REPO) / "boards" / "rp2" / "PITBOSS_PICO" / "build" / \
    "PITBOSS_PICO.uf2"
# The release variant (boards/rp2/PITBOSS_PICO/build.sh --variant FROZEN): the firmware
# frozen into the core, committed beside the ROMFS image and pinned by the same SHA256SUMS.
RELEASE_UF2 = PITBOSS_UF2.with_name("PITBOSS_PICO-FROZEN.uf2")
STOCK = "stock"
PITBOSS = "pitboss"
RELEASE = "release"
BOOTROM_NAME = "rp2040-bootrom-B1.bin"
# The RP2040's B1 mask ROM is one fixed image; anything else is not the chip we emulate.
BOOTROM_SHA256 = "90b31e108faedfa6bbcfcc33ba05dac61e645108cfbbdc385f8dafc71fde44ae"
WHERE = ("get MicroPython v1.27.0 for RPI_PICO from https://micropython.org/download/RPI_PICO/ "
         "and pass it with --uf2 or PITBOSS_PICO_UF2")
WHERE_STOCK = ("get MicroPython v1.27.0 for RPI_PICO (%s) from "
               "https://micropython.org/download/RPI_PICO/ and pass its path in "
               "PITBOSS_PICO_STOCK_UF2" % UF2_NAME)
# Pico work is 2.5-5x slower than the chip in wall time and a cold import costs seconds of
# chip time: host-side raw-REPL waits for the Pico use this instead of mpremote's 10 s.
TIMEOUT = 900.0


class FirmwareError(BoardError):
    """The Pico's image or bootrom is missing or not the pinned one: a board that cannot
    start, whose message names the file to give (one line from any command)."""


def _shared_dirs(repo: Path):
    """<ancestor>/shared/firmware for the repo's parent and up (a worktree sits deeper)."""
    for parent in repo.parents:
        yield parent / "shared" / "firmware"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listed(path: Path) -> str | None:
    """The SHA-256 the SHA256SUMS beside `path` gives for it, if any."""
    sums = path.parent / "SHA256SUMS"
    try:
        for line in sums.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("*") == path.name:
                return parts[0].lower()
    except OSError:
        pass
    return None


def find_firmware(uf2: str | os.PathLike | None = None, repo: Path | None = None):
    """(uf2 path, bootrom path, uf2 sha256): --uf2, then $PITBOSS_PICO_UF2, then the
    pitboss image committed in boards/rp2/PITBOSS_PICO/build/. "stock" (either way) is
    the stock image in ../shared/firmware/, "pitboss" the committed one, "release" its
    committed release variant (the firmware frozen into the core). A UF2 listed in
    a SHA256SUMS beside it must match it; the bootrom must be the B1 image (beside the
    UF2, $PITBOSS_PICO_BOOTROM or ../shared/firmware). FirmwareError (one line) when
    something is missing or wrong."""
    from host_tools.emu.vm.runner import repo_root

    repo = repo or repo_root()
    want_uf2 = str(uf2 or os.environ.get("PITBOSS_PICO_UF2") or PITBOSS)
    cands = []
    where = WHERE
    if want_uf2 == STOCK:
        # From an installed wheel there is no ../shared beside the code: $PITBOSS_PICO_STOCK_UF2,
        # or the stock image beside the bootrom $PITBOSS_PICO_BOOTROM names (both ship in
        # ../shared/firmware). `pitboss bench --port pico` measures it beside the others.
        env_stock = os.environ.get("PITBOSS_PICO_STOCK_UF2")
        env_rom = os.environ.get("PITBOSS_PICO_BOOTROM")
        cands += ([Path(env_stock)] if env_stock else []) + \
            [d / UF2_NAME for d in _shared_dirs(repo)] + \
            ([Path(env_rom).parent / UF2_NAME] if env_rom else [])
        where = WHERE_STOCK
    elif want_uf2 == PITBOSS:
        cands.append(PITBOSS_UF2)
    elif want_uf2 == RELEASE:
        cands.append(RELEASE_UF2)
    else:
        cands.append(Path(want_uf2))
    found = next((p for p in cands if p.is_file()), None)
    if found is None:
        raise FirmwareError("no Pico firmware at %s: %s" % (cands[0], where))
    digest = _sha256(found)
    want = _listed(found)
    if want and digest != want:
        raise FirmwareError("%s: SHA-256 %s does not match its SHA256SUMS (%s); %s"
                            % (found, digest, want, WHERE))
    env_rom = os.environ.get("PITBOSS_PICO_BOOTROM")
    # The checkout's ../shared/firmware, and the one beside the UF2's own checkout: from
    # an installed wheel the code's folder is site-packages, not a checkout.
    roms = ([Path(env_rom)] if env_rom else []) + [found.parent / BOOTROM_NAME] + \
        [d / BOOTROM_NAME for d in _shared_dirs(repo)] + \
        [d / BOOTROM_NAME for d in _shared_dirs(found.resolve())]
    rom = next((p for p in roms if p.is_file()), None)
    if rom is None:
        raise FirmwareError("no RP2040 B1 bootrom (%s) beside %s or in ../shared/firmware; "
                            "pass its path in PITBOSS_PICO_BOOTROM (it ships with the "
                            "rp2040js repository's demo, bootrom.ts)" % (BOOTROM_NAME, found))
    if _sha256(rom) != BOOTROM_SHA256:
        raise FirmwareError("%s is not the RP2040 B1 bootrom (SHA-256 mismatch)" % rom)
    return found, rom, digest


class Control(sidechannel.Control):
    """The emulator's control socket (board.mjs, control.mjs): one JSON request, one reply
    (the side channel's client, host_tools/emu/sidechannel.py), plus the Pico's own requests."""

    def __init__(self, path: str | os.PathLike, timeout: float = TIMEOUT):
        super().__init__(path, timeout)

    # conveniences -----------------------------------------------------------------
    def cycles(self) -> dict:
        return self("cycles")

    def display_ram(self) -> bytes:
        return bytes.fromhex(self("display")["ram"])


def control_for(port: str | os.PathLike) -> Control | None:
    """The control socket of the emulated Pico behind `port` (its state dir's tty), or None."""
    p = Path(port)
    sock = p.parent / "ctl.sock"
    if p.name == "tty" and sock.exists():
        return Control(sock)
    return None
