"""`pitboss flash` onto the pitboss image (boards/rp2/PITBOSS_PICO): the firmware as one
ROMFS partition, executed in place, instead of files copied to littlefs.

The image's flash layout is boards/rp2/PITBOSS_PICO/modules/pitboss_layout.py (loaded
here by path: the one place it is written). The program is two regions of flash, and the
manifest on the board's littlefs lists them instead of files (pitboss.store.integrity,
is_region):

    <sha256>  @core/<bytes>    the MicroPython core: the committed UF2's payload
    <sha256>  @romfs/<bytes>   the ROMFS image built here from the same .mpy build

A deploy (1) asks the board what it runs (mpremote_steps.describe: its ROMFS, the hashes
of both regions), (2) installs the image first if the board's core is not the committed UF2's
(a real Pico: UF2 over BOOTSEL mass storage, or `picotool load`; an emulated Pico runs
the image its emulator loaded, so there it is an error that names the fix), (3) writes
the manifest *pending*, removes any code left on littlefs (a stock-image flash's files:
the boot check tilts on code there), (4) `mpremote romfs deploy`s the image if it
differs, (5) has the board re-hash both regions against the host's and only then writes
the manifest complete and seals it. Cut anywhere, the manifest is pending or the ROMFS
is not what it lists: the frozen main.py (boards/rp2/PITBOSS_PICO/modules) then never
runs a byte of it, and the board answers with a firmware_mismatch tilt.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import host_tools
from host_tools.deploy import mpremote_steps as steps
from host_tools.deploy.flash_plan import FlashResult
from host_tools.deploy.mpy_build import build_dir
from host_tools.emu.pico import PITBOSS_UF2, RELEASE_UF2
from host_tools.output import FlashError
from pitboss.store import integrity

REPO = Path(host_tools.REPO)
BOARD_DIR = REPO / "boards" / "rp2" / "PITBOSS_PICO"
LAYOUT_PY = BOARD_DIR / "modules" / "pitboss_layout.py"
# The committed images (host_tools.emu.pico names them): the ROMFS image, and the release
# variant (build.sh --variant FROZEN), whose program is its core alone, so a deploy there
# writes only the manifest (docs/pitboss-image.md).
IMAGE, RELEASE = PITBOSS_UF2, RELEASE_UF2
# Firmware files the image has frozen (its own main.py and boot.py run instead): not in
# the ROMFS.
FROZEN = ("/main.py", "/boot.py")
TIMEOUT_DEPLOY_BASE = 120.0
TIMEOUT_DEPLOY_PER_KB = 1.0
UF2_BLOCK = 512
UF2_MAGIC = (0x0A324655, 0x9E5D5157, 0x0AB16F30)


def layout() -> dict:
    """The pitboss image's flash layout (pitboss_layout.py's NAME = const(N) values)."""
    ns: dict = {}
    src = LAYOUT_PY.read_text().replace("from micropython import const", "const = int")
    exec(compile(src, str(LAYOUT_PY), "exec"), ns)
    return {k: v for k, v in ns.items() if k.isupper() and isinstance(v, int)}


def uf2_payload(path: str | os.PathLike) -> bytes:
    """The flash bytes a UF2 writes, from the flash's start (0x10000000), as one block:
    what the image's core region holds after it was installed. Raises ValueError for a
    UF2 that is not contiguous from the start (not an image of ours)."""
    data = Path(path).read_bytes()
    base = layout()["FLASH_BASE"]
    out = bytearray()
    for off in range(0, len(data), UF2_BLOCK):
        b = data[off:off + UF2_BLOCK]
        m0, m1 = int.from_bytes(b[0:4], "little"), int.from_bytes(b[4:8], "little")
        if (m0, m1, int.from_bytes(b[508:512], "little")) != UF2_MAGIC:
            raise ValueError("%s: block %d is not a UF2 block" % (path, off // UF2_BLOCK))
        addr = int.from_bytes(b[12:16], "little")
        size = int.from_bytes(b[16:20], "little")
        if addr != base + len(out):
            raise ValueError("%s: block %d at 0x%x, expected 0x%x (not contiguous)"
                             % (path, off // UF2_BLOCK, addr, base + len(out)))
        out += b[32:32 + size]
    if len(out) > layout()["CODE_BYTES"]:
        raise ValueError("%s: %d bytes, more than the image's code area" % (path, len(out)))
    return bytes(out)


def region_entry(kind: str, blob: bytes) -> tuple[str, str]:
    """(sha256 hex, "@kind/len") for a manifest line."""
    return hashlib.sha256(blob).hexdigest(), "@%s/%d" % (kind, len(blob))


def romfs_image(files) -> bytes:
    """The ROMFS image of the built files (mpy_build.BuiltFile), minus what the image has
    frozen; deterministic (sorted paths), so equal builds give equal images."""
    from mpremote.romfs import VfsRomWriter

    tree: dict = {}
    for f in files:
        if f.dest in FROZEN:
            continue
        node = tree
        parts = f.dest.strip("/").split("/")
        for d in parts[:-1]:
            node = node.setdefault(d, {})
        node[parts[-1]] = Path(f.local).read_bytes()
    w = VfsRomWriter()

    def put(node):
        for name in sorted(node):
            if isinstance(node[name], dict):
                w.opendir(name)
                put(node[name])
                w.closedir()
            else:
                w.mkfile(name, node[name])

    put(tree)
    img = w.finalise()
    if len(img) > layout()["ROMFS_BYTES"]:
        raise ValueError("the ROMFS image is %d bytes, the partition %d"
                         % (len(img), layout()["ROMFS_BYTES"]))
    return img


def program(files, uf2: str | os.PathLike = IMAGE, romfs: bool = True) -> dict:
    """{entry: blob} of the program regions for this build on this image (the release
    image, romfs=False: the core alone, the firmware frozen into it)."""
    core = uf2_payload(uf2)
    out = {region_entry("core", core)[1]: core}
    if romfs:
        rom = romfs_image(files)
        out[region_entry("romfs", rom)[1]] = rom
    return out


def program_for(files, release: bool) -> dict:
    """program() for the image a board runs: the release image (its describe() says
    "frozen") has the core alone, the ROMFS image its core and this build's ROMFS."""
    return program(files, RELEASE, romfs=False) if release else program(files)


def manifest_text(regions: dict, board: str, mode: str, state: str) -> str:
    return integrity.format_manifest(
        [(hashlib.sha256(b).hexdigest(), e) for e, b in sorted(regions.items())],
        board, mode, state)


# --------------------------------------------------------------------------------------
# Installing the image on a real Pico
# --------------------------------------------------------------------------------------
def bootsel_mounts() -> list[Path]:
    """Mounted RP2040 USB bootloader drives (INFO_UF2.TXT naming RPI-RP2): where a
    dragged-on UF2 goes. $PITBOSS_BOOTSEL_DIR first, if set."""
    cands = []
    if os.environ.get("PITBOSS_BOOTSEL_DIR"):
        cands.append(Path(os.environ["PITBOSS_BOOTSEL_DIR"]))
    for pattern in ("/media/*/RPI-RP2", "/run/media/*/RPI-RP2", "/media/RPI-RP2",
                    "/Volumes/RPI-RP2", "/mnt/RPI-RP2"):
        import glob

        cands += [Path(p) for p in sorted(glob.glob(pattern))]
    out = []
    for c in cands:
        try:
            if "RPI-RP2" in (c / "INFO_UF2.TXT").read_text(errors="replace"):
                out.append(c)
        except OSError:
            continue
    return out


def install_image(dev: str, uf2: Path, progress, wait: float = 30.0) -> str:
    """Put the image on a real Pico and wait for its serial port: UF2 copied to a mounted
    BOOTSEL drive (rebooting the Pico into it with machine.bootloader() when none is
    mounted), else `picotool load -x -f` if picotool is on PATH. Returns how."""
    mounts = bootsel_mounts()
    if not mounts and not shutil.which("picotool"):
        progress("image: rebooting the Pico into its USB bootloader (machine.bootloader())")
        with contextlib.suppress(FlashError):
            steps.run(dev, ["exec", "import machine\nmachine.bootloader()"], 15.0)
        end = time.monotonic() + wait
        while not mounts and time.monotonic() < end:
            time.sleep(0.5)
            mounts = bootsel_mounts()
    if mounts:
        progress("image: copying %s to the BOOTSEL drive %s" % (uf2.name, mounts[0]))
        shutil.copyfile(uf2, mounts[0] / uf2.name)
        how = "bootsel"
    elif shutil.which("picotool"):
        progress("image: picotool load -x -f %s" % uf2)
        p = subprocess.run(["picotool", "load", "-x", "-f", str(uf2)], capture_output=True,
                           text=True, timeout=120)
        if p.returncode:
            raise FlashError("picotool load failed: %s" % (p.stderr or p.stdout).strip())
        how = "picotool"
    else:
        raise FlashError(
            "cannot install the pitboss image: no BOOTSEL drive mounted (hold BOOTSEL while "
            "plugging the Pico in, or mount RPI-RP2; PITBOSS_BOOTSEL_DIR names it) and no "
            "picotool on PATH")
    progress("image: waiting for %s to come back" % dev)
    end = time.monotonic() + wait
    while not os.path.exists(dev) and time.monotonic() < end:
        time.sleep(0.5)
    if not os.path.exists(dev):
        raise FlashError("the Pico did not come back on %s within %.0f s after the image"
                         % (dev, wait))
    time.sleep(2.0)  # MicroPython's first boot formats littlefs (pitboss _boot.py)
    return how


# --------------------------------------------------------------------------------------
# The deploy
# --------------------------------------------------------------------------------------
def _is_emulated(dev: str) -> bool:
    try:
        from host_tools.emu.vboard_state import is_virtual
    except ImportError:
        return False
    return is_virtual(dev)


def deploy(dev: str, name: str, mode: str, files, info: dict, progress, root: Path = REPO,
           image: str = "auto"):
    """Steps (2)-(5) of the module's doc for a board whose describe() answer is `info`.
    image: "pitboss" (the ROMFS image), "release" (the firmware frozen into the core), or
    "auto": the one the board runs. Returns a flash_plan.FlashResult."""
    t0 = time.monotonic()
    # The release image's firmware is frozen into its core: nothing to deploy but the
    # manifest that lists the core (pitboss_program.check() refuses any other).
    release = bool(info.get("frozen")) if image == "auto" else image == "release"
    uf2 = RELEASE if release else IMAGE
    regions = program_for(files, release)
    core_e = next(e for e in regions if e.startswith("@core/"))
    rom_e = next((e for e in regions if e.startswith("@romfs/")), None)
    rom = regions[rom_e] if rom_e else b""
    have = steps.describe(dev, list(regions))["hashes"]
    want = {e: hashlib.sha256(b).hexdigest() for e, b in regions.items()}
    if release:
        progress("image: pitboss release (the firmware frozen into its core, %d bytes)"
                 % len(regions[core_e]))
    else:
        progress("image: pitboss (ROMFS %d KB at /rom; core %d bytes, ROMFS image %d bytes)"
                 % (info["romfs"] // 1024, len(regions[core_e]), len(rom)))
    if have.get(core_e) != want[core_e]:
        if _is_emulated(dev):
            raise FlashError(
                "the emulated Pico runs another image than %s: restart it with that image "
                "(pitboss board start --kind pico --uf2 %s)"
                % (uf2, "release" if release else "pitboss"))
        install_image(dev, uf2, progress)
        have = steps.describe(dev, list(regions))["hashes"]
        if have.get(core_e) != want[core_e]:
            raise FlashError("the Pico's core still differs from %s after installing it"
                             % uf2)
        progress("image: installed (%s)" % uf2.name)
    else:
        progress("image: the board runs %s already" % uf2.name)
    final = manifest_text(regions, name, mode, integrity.COMPLETE)
    stray = sorted(set(p for p in info.get("files") or () if integrity.is_code(p)))
    result = FlashResult(name, mode, len(regions))
    rom_ok = rom_e is None or have.get(rom_e) == want[rom_e]
    if rom_ok and not stray and info.get("manifest") == final:
        progress("up to date: the board's core and ROMFS match the build" if rom_e else
                 "up to date: the board's core is the release image")
        result.seconds = time.monotonic() - t0
        return result
    pending = manifest_text(regions, name, mode, integrity.PENDING)
    # Few mpremote runs: each costs seconds of wall time on a loaded machine. The pending
    # manifest (and the stray code's removal) in one; the deploy, the board's re-hash and
    # the seal in the next, the seal only if the commit wrote the complete manifest, and
    # after a soft reset: modules imported before the deploy execute their bytecode in
    # place, from ROMFS bytes the deploy has just overwritten (pitboss.store.auth seals).
    first = ["exec", steps.board_code("begin(%r, [])" % (pending,))]
    if stray:
        progress("removing %d code files from littlefs (nothing there may run: %s)"
                 % (len(stray), ", ".join(stray[:4]) + (" ..." if len(stray) > 4 else "")))
        first += ["+", "exec", steps.board_code("remove(%r)" % (stray,))]
    steps.report(steps.run(dev, first, steps.TIMEOUT_QUERY))
    seal = "".join(" " + ln + "\n" for ln in steps.SEAL_CODE.splitlines())
    last = ["exec", steps.board_code("commit(%r)" % (final,)), "+", "soft-reset", "+",
            "exec", steps.board_code("if read_manifest() == %r:\n%s" % (final, seal))]
    timeout = steps.TIMEOUT_QUERY + 60
    if rom_e is None:
        progress("romfs: none (the release image's firmware is in its core)")
    elif rom_ok:
        progress("romfs: the board's ROMFS matches the build (%d bytes)" % len(rom))
    else:
        out = build_dir(root) / "romfs" / ("%s.romfs" % name)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(rom)
        progress("romfs: mpremote romfs deploy %s (%d bytes, %d files)"
                 % (out.name, len(rom), sum(1 for f in files if f.dest not in FROZEN)))
        last = ["romfs", "deploy", str(out), "+"] + last
        timeout += TIMEOUT_DEPLOY_BASE + TIMEOUT_DEPLOY_PER_KB * len(rom) / 1024
        result.copied = [rom_e]
    res = steps.report(steps.run(dev, last, timeout))
    if not res["ok"]:
        raise FlashError("verification after the deploy failed; the board's manifest "
                         "stays pending. Board vs host: %s" % (res["bad"],))
    result.removed = stray
    result.seconds = time.monotonic() - t0
    progress("verified: the board's core%s match%s the build (%.1f s)"
             % (" and ROMFS" if rom_e else "", "" if rom_e else "es", result.seconds))
    return result


if __name__ == "__main__":  # pragma: no cover - a helper for people: the layout
    for k, v in layout().items():
        print("%-14s 0x%06x %7d" % (k, v, v))
    sys.exit(0)
