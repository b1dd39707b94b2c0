# The verbs that ask the board itself, answered by the App (the controller's `app`):
# its heap (mem), the seeded check of its firmware (verify), a re-key from production
# (provision, authenticated), who it is (version) and what its display shows (screen).
import gc

from pitboss import protocol
from pitboss.compat import max_block, mem_alloc, mem_free, pystack, started_ms
from pitboss.errors import Refused
from pitboss.store import integrity


SCREEN_CHUNK = 128  # display RAM bytes per `screen` reply line (256 hex digits)


def mem(ctl, args):
    """mem: {free, alloc, min_free, max_block, up_ms, boot_ms, unchecked,
    program_pending, and on the pitboss image pystack: [deepest, size]} in bytes
    after a collection; max_block (the largest single allocation that would succeed)
    is the allocation table's longest free run on the pitboss image (pitboss_heap),
    elsewhere found by trial allocations bisected between 0 and free, done only here, on
    request. None on a port without gc.mem_free (CPython)."""
    a = ctl.app
    import time

    # up_ms: chip time since reset when this line is taken (the boot budget); since the
    # soft reset after one, where the image tells when it was (compat.started_ms)
    up = getattr(time, "ticks_ms", None)
    up = (up() - started_ms()) & 0x3FFFFFFF if up is not None else None
    gc.collect()
    free = mem_free()
    a.note_mem()
    if free is None:
        return {"free": None, "alloc": None, "min_free": None, "max_block": None,
                "up_ms": up}
    # unchecked: journal bytes the boot left for the idle passes to check (0: done);
    # program_pending: the core's hash, deferred from boot, not finished yet
    r = {"free": free, "alloc": mem_alloc(), "min_free": a.min_free,
         "max_block": _max_block(free), "up_ms": up, "boot_ms": a.boot["ms"],
         "unchecked": ctl.journal.unchecked,
         "program_pending": ctl.program_pending()}
    ps = pystack()
    if ps is not None:
        r["pystack"] = ps  # [deepest since reset, size]: the pitboss image's own stack
    return r


def verify(ctl, args):
    """verify SEED_HEX: the seeded answer over every file (pitboss.store.integrity), for a
    verifier that compares it with its own build; needs no key, reveals no secret."""
    a = ctl.app
    from binascii import unhexlify
    import sys

    if len(args) != 1:
        raise Refused("bad_args", "usage: verify SEED_HEX (%d..%d bytes)"
                            % (integrity.SEED_MIN, integrity.SEED_MAX))
    try:
        seed = unhexlify(args[0])
    except ValueError:
        raise Refused("bad_args", "the seed is not hex")
    if not integrity.SEED_MIN <= len(seed) <= integrity.SEED_MAX:
        # Checked here: a ValueError from inside would be an internal_error tilt.
        raise Refused("bad_args", "the seed must be %d..%d bytes"
                      % (integrity.SEED_MIN, integrity.SEED_MAX))
    reply = integrity.seeded_answer(seed)
    info, _ = integrity.parse_manifest(integrity.read_manifest() or "")
    mac = ctl.auth.mac()
    seal = integrity.read_manifest(integrity.SEAL)
    reply.update(board=a.hw.NAME, platform=sys.platform,
                 mpy=getattr(sys.implementation, "_mpy", 0),
                 mode=info.get("mode"), state=info.get("state"),
                 sealed=None if mac is None else (
                     seal is not None and seal.strip() == integrity.seal_of(
                         mac, integrity.read_manifest() or "")))
    return reply


def provision(ctl, args):
    """auth N MAC provision WRAPPED_HEX FINGERPRINT: a new key, from production, for
    whoever holds the current one (pitboss.store.auth.Auth.rekey)."""
    if len(args) != 2:
        raise Refused("bad_args", "usage: provision WRAPPED_KEY_HEX FINGERPRINT")
    a = ctl.auth
    try:
        return {"provisioned": a.rekey(a.counter, args[0], args[1])}
    except ValueError as e:  # a refused re-key (no key, bad hex, wrong fingerprint)
        raise Refused("bad_args", str(e))


def version(ctl, args):
    """version: the firmware's version and the interpreter; on a table (an App behind
    the controller) also its mode, the chip's unique id (boards/) and its key's
    fingerprint (never the key), for the host's key store. ctl is None where only the
    stateless verbs run (pitboss.verbs.batch)."""
    import sys

    reply = {"version": protocol.VERSION,
             "implementation": sys.implementation.name}  # type: dict
    if ctl is None or ctl.app is None:
        return reply
    a = ctl.app
    from pitboss import service

    reply["mode"] = "service" if service.requested(a.hw) else "production"
    # (Keys of more than 10 characters, and names MicroPython has in ROM: no new
    # interned names, DEVELOPERS.md.)
    u = getattr(a.hw, "unique_id", None)
    try:
        reply["unique_id"] = u() if u is not None else None
    except Exception:  # noqa: BLE001  (a board without one still answers)
        reply["unique_id"] = None
    reply["key_fingerprint"] = getattr(ctl.auth, "id", None)
    return reply


def screen(ctl, args):
    """screen [CHUNK]: the display RAM as hex, SCREEN_CHUNK bytes per reply line (a
    host asks for chunk 0..of-1), so no reply holds the whole frame as one string."""
    hw = ctl.app.hw
    ram = ctl.app.display_ram()
    if ram is None:
        raise Refused("no_display", "this table has no display")
    of = (len(ram) + SCREEN_CHUNK - 1) // SCREEN_CHUNK
    i = 0
    if args:
        if not args[0].isdigit():
            raise Refused("bad_args", "usage: screen [CHUNK 0..%d]" % (of - 1))
        i = int(args[0])
    if i >= of:
        raise Refused("bad_args", "chunk %d of %d" % (i, of))
    from binascii import hexlify

    return {"chunk": i, "of": of, "width": hw.DISPLAY_WIDTH,
            "height": hw.DISPLAY_HEIGHT,
            "hex": hexlify(bytes(ram[i * SCREEN_CHUNK:(i + 1) * SCREEN_CHUNK])).decode()}


def _max_block(free):
    """The largest allocation that can succeed now: on the pitboss image one walk of the
    allocation table in C; elsewhere the largest bytearray, bisected by trial allocations, each dropped
    at once (MicroPython has no API for the largest free block): ~18 collections, 0.4 s
    of a Pico's chip time in which the table deals no card."""
    m = max_block()
    if m is not None:
        return m
    lo, hi = 0, free
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            b = bytearray(mid)
        except MemoryError:
            hi = mid - 1
        else:
            b = None
            lo = mid
        gc.collect()
    return lo
