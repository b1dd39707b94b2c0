# The program check of the pitboss image, frozen into it so that it runs before a byte
# of the firmware in ROMFS does (main.py). The program is two regions of flash, both
# memory-mapped: the MicroPython core the UF2 wrote (CODE) and the ROMFS `pitboss flash`
# deployed. The flasher's manifest on littlefs (/manifest.sha256, pitboss.store.integrity)
# lists each as a line "<sha256>  @core/<bytes>" / "<sha256>  @romfs/<bytes>"; it is
# written pending before the deploy and complete only after the board re-hashed both
# (host_tools/deploy/romfs_deploy.py). check() hashes the ROMFS at boot, before any of its code
# runs; pitboss.store.integrity then finds the result in `verified` instead of hashing it
# twice (SHA-256 here: ~1.1 ms a KB of chip time). The core (344 KB, ~0.37 s) is what runs
# this check, so hashing it first proves nothing more than hashing it a moment later: it is
# left in `deferred`, and the controller hashes it with step(), a chunk per idle pass after
# the first line is answered, and all that is left before anything moves the round
# (pitboss.halting: check_program), so no card is dealt on a core that was not checked.
import hashlib
import pitboss_layout as _L

MANIFEST = "/manifest.sha256"
SERVICE_PIN = 22  # boards/pico.py SERVICE_PIN: the logic door's switch, closed = service
_CHUNK = 8192     # hashed per call, so the USB stack gets its turn between them
verified = {}     # region entry -> its hex SHA-256, hashed this boot by check() or step()
deferred = []     # [(entry, hex the manifest lists)]: the core's check, left to step()
_h = None         # step()'s hash in progress over deferred[0], and the bytes it has had
_at = 0
# What _boot.py found on littlefs at this reset: "mounted", "formatted: ..." or
# "damaged: ..." (left unmounted, never formatted).
lfs = "mounted"


def region(entry):
    """The flash an entry "@core/N" or "@romfs/N" names, as a memoryview (no copy), or
    None if the entry is not a region of this image."""
    try:
        name, n = entry[1:].split("/")
        n = int(n)
    except ValueError:
        return None
    if name == "core" and 0 < n <= _L.CODE_BYTES:
        import uctypes

        return memoryview(uctypes.bytearray_at(_L.FLASH_BASE, n))
    if name == "romfs" and 0 < n <= _L.ROMFS_BYTES:
        import vfs

        return memoryview(vfs.rom_ioctl(2, 0))[:n]
    return None


def sha256_hex(entry):
    """Hex SHA-256 of the region `entry` names (None: no such region)."""
    from binascii import hexlify

    mem = region(entry)
    if mem is None:
        return None
    h = hashlib.sha256()
    for i in range(0, len(mem), _CHUNK):
        h.update(mem[i:i + _CHUNK])
    return hexlify(h.digest()).decode()


def _frozen():
    # Looked up among the frozen modules only: a file on littlefs of that name must not
    # switch the check off.
    import sys

    path = sys.path[:]
    sys.path[:] = [".frozen"]
    try:
        import pitboss_frozen  # noqa: F401

        return True
    except ImportError:
        return False
    finally:
        sys.path[:] = path


def check():
    """None if the ROMFS may run, else why not: no manifest, a pending one (a deploy that
    did not finish), no ROMFS listed, or a region that is not what the manifest lists."""
    global _h
    verified.clear()
    del deferred[:]
    _h = None
    if lfs.startswith("damaged"):
        return lfs
    # The FROZEN (release) variant has the firmware in the core itself: its manifest
    # lists the core alone (host_tools/deploy/romfs_deploy.py), hashed after the first
    # line as on the ROMFS image; nothing from the ROMFS partition runs (.frozen comes
    # first in sys.path, and every firmware module is frozen).
    frozen = _frozen()
    try:
        with open(MANIFEST) as f:
            text = f.read()
    except OSError:
        return "no manifest (%s): no firmware was deployed" % MANIFEST
    complete = False
    romfs = False
    for line in text.split("\n"):
        if line.startswith("#"):
            complete = complete or "state=complete" in line.split()
        elif line[66:67] == "@":
            entry = line[66:].strip()
            if entry.startswith("@core/") and region(entry) is not None:
                deferred.append((entry, line[:64]))
                continue
            got = sha256_hex(entry)
            if got != line[:64]:
                return "%s is not what the manifest lists" % entry
            verified[entry] = got
            romfs = romfs or entry.startswith("@romfs/")
    if not complete:
        return "the last deploy did not finish (manifest pending)"
    if frozen:
        # The core is the program: a manifest that does not list it (one a ROMFS deploy
        # wrote for the other image) was never this image's deploy.
        if romfs or not deferred:
            return "the manifest is not the release image's (it must list the core alone)"
        return None
    if not romfs:
        return "the manifest lists no ROMFS"
    return None


def step():
    """Hash the next chunk (8 KB, ~9 ms of a Pico) of what check() deferred. Returns None
    while more is left; once it is all hashed, "" if it matched (and `verified` has it) or
    why not. An entry that differs ends the check: the rest is never hashed."""
    global _h, _at
    if not deferred:
        return ""
    entry, want = deferred[0]
    mem = region(entry)
    if _h is None:
        _h, _at = hashlib.sha256(), 0
    _h.update(mem[_at:_at + _CHUNK])
    _at += _CHUNK
    if _at < len(mem):
        return None
    from binascii import hexlify

    got = hexlify(_h.digest()).decode()
    _h = None
    deferred.pop(0)
    if got != want:
        del deferred[:]
        return "%s is not what the manifest lists" % entry
    verified[entry] = got
    return None if deferred else ""


def service():
    """Is the logic door's service switch held closed (reads 0 through the pull-up)?"""
    from machine import Pin

    return Pin(SERVICE_PIN, Pin.IN, Pin.PULL_UP).value() == 0


def tilted(why):
    """The board when its program fails check(): no ROMFS code runs; every protocol line
    is answered with the firmware_mismatch tilt (docs/protocol.md's refusal shape). With
    the service switch held, Ctrl-C leaves for the REPL, so the firmware can be deployed
    again; in production there is no way out but a good deploy in service mode."""
    import json
    import sys
    import micropython

    held = service()
    msg = "firmware_mismatch: " + why
    if held:
        micropython.kbd_intr(3)
        print("PITBOSS tilt %s; service mode: Ctrl-C for the REPL, then pitboss flash" % msg)
    # "version" and "mode" as the firmware's own `version` reply has them, so the host's
    # probe (host_tools/link/protolink.py) tells service from production here too.
    # The line is echoed back (cut short), so a host waiting for the answer to a line of
    # its own (protolink.ready) knows this one is it.
    reply = {"ok": False, "error": {"code": "tilted", "message": msg},
             "tilts": ["firmware_mismatch"], "version": None,
             "mode": "service" if held else "production", "line": ""}
    # Byte by byte with a bounded buffer: a line of any length costs no heap, and
    # nothing here may end this function in production (the REPL would follow).
    line = bytearray()
    while True:
        try:
            c = sys.stdin.buffer.read(1)
            if c == b"\n":
                reply["line"] = line.decode().strip()
                sys.stdout.write(json.dumps(reply) + "\n")
                line = bytearray()
            elif c and 32 <= c[0] < 127 and len(line) < 64:  # printable ASCII only
                line += c
        except Exception:  # noqa: BLE001  (KeyboardInterrupt, service mode only, leaves)
            line = bytearray()
