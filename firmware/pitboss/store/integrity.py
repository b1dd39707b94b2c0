# Are the files on this board the ones the host flashed?
#
# The flasher (host_tools/deploy/flash.py) keeps /manifest.sha256 on the board, in sha256sum's
# format ("<hex>  <path>" per line) after one header line:
#     # pitboss-manifest board=pico mode=mpy state=complete
# It writes the new manifest with state=pending *before* copying anything and rewrites it
# as complete only after the board has re-hashed every file and all matched the host's
# build; so an interrupted flash leaves a board that reports itself broken, never one
# that silently runs half of each firmware. check() is what the firmware runs at boot.
#
# The manifest alone proves nothing (whoever changes a file can change its line), so:
#  - every file on the filesystem is enumerated, not just the listed ones: any code
#    (.py/.mpy: what MicroPython imports or runs) that is not listed is a problem (a .py
#    shadowing an .mpy, /boot.py, a module in /lib or beside the journal); other files
#    (the journal, state, key, deck map, test vectors) are data nothing executes;
#  - the manifest is sealed: /manifest.mac holds HMAC-SHA256(board key, "pitboss-manifest\n"
#    + manifest), written on the board after a flash verified every file against the
#    host's build and at provisioning (pitboss.store.auth.seal_manifest); the boot check
#    recomputes it, so a file changed together with its manifest line is caught by anyone
#    who does not hold the key (docs/security.md says who does);
#  - seeded() answers a verifier's fresh random seed with an HMAC of every file under that
#    seed (GLI-style), so a stored answer cannot be replayed.
# The host also sends this module's *source* to the board and calls the functions below
# (describe/begin/commit/seeded), so that a corrupted copy on the board never vouches for
# itself.
# That is why it imports nothing from pitboss: it must run on a board that has no
# pitboss package yet. It also runs on CPython, where the host shares the manifest code.
import hashlib
import os
from binascii import hexlify

try:
    from micropython import const
except ImportError:  # CPython: const() is only a compile-time hint
    # `__x` makes the parameter positional-only for type checkers, like the stub's;
    # MicroPython has no `/` syntax for that.
    def const(__x):
        return __x


MANIFEST = "/manifest.sha256"
SEAL = "/manifest.mac"
SEAL_PREFIX = b"pitboss-manifest\n"
HEADER = "# pitboss-manifest"
SEED_MIN = const(16)  # bytes of a verification seed
SEED_MAX = const(64)
PENDING = "pending"
COMPLETE = "complete"
# One read buffer for every file: hashing a whole firmware allocates a few small objects
# per file instead of a chunk per read. 512 = one flash sector read on littlefs/FAT.
_CHUNK = const(512)
_buf = None


def _feed(h, path):
    """Hash the file's bytes into `h` through the one shared buffer; OSError if it cannot
    be read."""
    global _buf
    if _buf is None:
        _buf = bytearray(_CHUNK)
    buf = _buf
    f = open(path, "rb")
    try:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            # A full chunk is hashed as is; only the last, short one needs a slice.
            h.update(buf if n == _CHUNK else memoryview(buf)[:n])
    finally:
        f.close()


def is_region(path):
    """A manifest entry that is program flash, not a file: "@core/N" (the MicroPython core
    the UF2 wrote, N bytes from the flash's start) or "@romfs/N" (the first N bytes of the
    ROMFS partition, where `pitboss flash` deploys the firmware on the pitboss image:
    boards/rp2/PITBOSS_PICO). The frozen pitboss_program module maps them (memory-mapped
    reads, no copy); a board without it (a stock image, CPython) has no such region."""
    return path[:1] == "@"


def _program():
    try:
        # frozen into the pitboss image only
        import pitboss_program  # pyright: ignore[reportMissingImports]

        return pitboss_program
    except ImportError:
        return None


def file_sha256(path):
    """Hex SHA-256 of the file's bytes (or of the program flash a region entry names), or
    None if it cannot be opened."""
    if is_region(path):
        prog = _program()
        return prog.sha256_hex(path) if prog else None
    h = hashlib.sha256()
    try:
        _feed(h, path)
    except OSError:
        return None
    return hexlify(h.digest()).decode()


class Mac:
    """HMAC-SHA256 (RFC 2104) with a fixed key, on hashlib.sha256 (MicroPython has no
    hmac module): the padded keys are computed once. pitboss.store.auth uses this one too."""

    def __init__(self, key):
        if not isinstance(key, (bytes, bytearray)):
            raise TypeError("key must be bytes")
        if len(key) > 64:
            key = hashlib.sha256(key).digest()  # RFC 2104: long keys are hashed first
        key = bytes(key) + bytes(64 - len(key))
        self._ik = bytes([b ^ 0x36 for b in key])
        self._ok = bytes([b ^ 0x5C for b in key])

    def start(self):
        # sha256 objects cannot be copied on MicroPython: each MAC hashes the padded key.
        return hashlib.sha256(self._ik)

    def finish(self, h):
        o = hashlib.sha256(self._ok)
        o.update(h.digest())
        return o.digest()

    def digest(self, msg):
        h = self.start()
        h.update(msg)
        return self.finish(h)

    def __repr__(self):
        return "<Mac>"  # never the key


def is_code(path):
    """What MicroPython would import or run: .py and .mpy files, wherever they are."""
    return path.endswith(".py") or path.endswith(".mpy")


def listed(root=""):
    """The board paths the manifest under `root` lists, plus the manifest itself."""
    out = set(p for _, p in parse_manifest(read_manifest(root + MANIFEST) or "")[1])
    out.add(MANIFEST)
    return out


def files(root="/"):
    """Every file under `root`, sorted. On the virtual board /dev and /proc are the C
    runtime's device folders, not flash (the bridge never stores them), so skipped; on
    the pitboss image /rom is the ROMFS mount, which listing / shows too: its bytes are
    the @romfs region the manifest lists, not files on littlefs."""
    import sys

    skip = ()
    if root == "/":
        if sys.platform == "webassembly":
            skip = ("/dev", "/proc")
        elif _romfs_bytes():
            skip = ("/rom",)
    out = []
    _walk(root.rstrip("/"), skip, out)
    out.sort()
    return out


def _walk(d, skip, out):
    ilistdir = getattr(os, "ilistdir", None)
    if ilistdir is None:  # CPython: names only, a stat each
        entries = []
        for name in os.listdir(d or "/"):
            try:
                entries.append((name, os.stat(d + "/" + name)[0]))
            except OSError:
                continue
    else:
        # MicroPython: the entry's type comes with its name; a stat per file made the
        # boot check's walk 260 ms of a Pico's boot (issue 11).
        entries = ilistdir(d or "/")
    for e in entries:
        p = d + "/" + e[0]
        if p in skip:
            continue
        if e[1] & 0x4000:  # S_IFDIR
            _walk(p, skip, out)
        else:
            out.append(p)


def seal_of(mac, text):
    """The seal of manifest `text` under `mac` (a Mac with the board key), as hex."""
    return hexlify(mac.digest(SEAL_PREFIX + text.encode())).decode()


def format_manifest(entries, board, mode, state):
    """entries: iterable of (hex, path). Returns the manifest text."""
    lines = ["%s board=%s mode=%s state=%s" % (HEADER, board, mode, state)]
    for digest, path in entries:
        lines.append("%s  %s" % (digest, path))
    return "\n".join(lines) + "\n"


def parse_manifest(text):
    """-> (info, entries): info is the header's key=value dict ({} if the header is
    missing), entries a list of (hex, path) in file order. Malformed lines are kept as
    ('', line) so that they count as mismatches instead of vanishing."""
    info = {}
    entries = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith(HEADER):
                for word in line[len(HEADER):].split():
                    i = word.find("=")  # not str.partition: optional on MicroPython ports
                    if i > 0:
                        info[word[:i]] = word[i + 1:]
            continue
        i = line.find("  ")
        if i == 64:
            entries.append((line[:64], line[66:]))
        else:
            entries.append(("", line))
    return info, entries


def read_manifest(path=MANIFEST):
    """The manifest's text, or None if there is none."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def write_manifest(text, path=MANIFEST):
    # Write aside and rename: a power cut leaves the old or the new manifest, never half.
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def check(path=MANIFEST, root=None, mac=None, cached=False):
    """Re-hash every file the manifest lists. Returns a list of (path, problem), empty when
    all is well; problem is 'no manifest', 'pending' (a flash did not finish), 'missing',
    'mismatch' or 'malformed'. With `root` (the boot check: "/"), every file under it
    that is neither listed nor data is 'unlisted'. With `mac` (a Mac under the board's
    key; None when the board has no key yet), the seal must match: 'unsealed' or
    'seal mismatch'. Region entries (is_region) are hashed like files; with `cached`
    (the boot check) a region the frozen main.py already hashed this boot against this
    manifest (pitboss_program.verified) is not hashed again, and one it deferred (the
    core) is left to the caller (deferred_check)."""
    text = read_manifest(path)
    if text is None:
        return [(path, "no manifest")]
    info, entries = parse_manifest(text)
    problems = []
    if info.get("state") != COMPLETE:
        problems.append((path, PENDING))
    if mac is not None:
        seal = path[:-len(MANIFEST)] + SEAL if path.endswith(MANIFEST) else path + ".mac"
        got = read_manifest(seal)
        if got is None:
            problems.append((seal, "unsealed"))
        elif got.strip() != seal_of(mac, text):
            problems.append((seal, "seal mismatch"))
    if root is not None:
        known = set(p for _, p in entries)
        for p in files(root):
            if is_code(p) and p not in known:
                problems.append((p, "unlisted"))
    for digest, fpath in entries:
        if not digest:
            problems.append((fpath, "malformed"))
            continue
        actual = None
        if cached and is_region(fpath):
            prog = _program()
            actual = prog.verified.get(fpath) if prog else None
            if actual is None and prog and _deferred(prog, fpath):
                continue  # hashed after boot, before play (deferred_check)
        if actual is None:
            actual = file_sha256(fpath)
        if actual is None:
            problems.append((fpath, "missing"))
        elif actual != digest:
            problems.append((fpath, "mismatch"))
    return problems


def _deferred(prog, entry):
    for e in getattr(prog, "deferred", ()):
        if e[0] == entry:
            return True
    return False


def deferred_check():
    """The boot's deferred program check, one chunk per call (pitboss_program.step: None
    while more is left, then "" or the mismatch), or None when nothing was deferred: a
    stock image, the frozen variant, CPython."""
    prog = _program()
    return prog.step if prog is not None and getattr(prog, "deferred", None) else None


# ---- called by the host through the REPL (host_tools/deploy/flash.py) ----------------------
# Each prints one line "PITBOSS-INTEGRITY <json>" that the host looks for in the output.


def _report(obj):
    import json

    print("PITBOSS-INTEGRITY " + json.dumps(obj))


def describe(paths):
    """What the host needs before a flash: port, .mpy ABI, manifest, hashes of `paths`,
    and every file on the board (files: the ones that are not data)."""
    import sys

    _report({
        "platform": sys.platform,
        "mpy": getattr(sys.implementation, "_mpy", 0),
        "version": list(sys.implementation.version[:3]),
        "manifest": read_manifest(),
        "hashes": {p: file_sha256(p) for p in paths},
        "files": [p for p in files("/") if is_code(p)],
        "romfs": _romfs_bytes(),
        "frozen": _frozen_image(),
    })


def _frozen_image():
    """Is this the pitboss image's release variant, with the firmware frozen into its
    core (build.sh --variant FROZEN)? Then `pitboss flash` deploys no code, only the
    manifest of the core."""
    prog = _program()
    try:
        return bool(prog is not None and prog._frozen())
    except Exception:  # noqa: BLE001  (an older image's pitboss_program)
        return False


def _romfs_bytes():
    """The size of the board's ROMFS partition (0: none, as on a stock image): where
    `pitboss flash` deploys the firmware instead of copying files (the pitboss image)."""
    try:
        import vfs

        dev = vfs.rom_ioctl(2, 0)  # pyright: ignore  (v1.27's ROMFS, not in the stubs)
        return 0 if isinstance(dev, int) else len(memoryview(dev))
    except (ImportError, AttributeError, OSError, TypeError):
        return 0


def seeded_answer(seed, root="/"):
    """The answer to a verifier's seed (bytes, SEED_MIN..SEED_MAX): every file under
    `root` that is code or that the manifest lists, and the manifest, in sorted path
    order, as [path, hex HMAC-SHA256(seed, path + NUL + the file's bytes)], and digest = HMAC-SHA256(seed, for each file in that
    order: path + NUL + its raw HMAC). A host with the same build computes the same;
    without the seed in advance, no stored answer fits."""
    if not SEED_MIN <= len(seed) <= SEED_MAX:
        raise ValueError("seed must be %d..%d bytes" % (SEED_MIN, SEED_MAX))
    mac = Mac(seed)
    total = mac.start()
    out = []
    base = root.rstrip("/")
    known = listed(base)
    # The program flash the manifest lists ("@..." sorts after every "/..." path).
    regions = sorted(p for p in known if is_region(p))
    prog = _program() if regions else None
    for p in files(root) + regions:
        rel = p if is_region(p) else p[len(base):]
        if not is_code(rel) and rel not in known:
            continue
        name = rel.encode()
        h = mac.start()
        h.update(name + b"\0")
        if is_region(p):
            mem = prog.region(p) if prog else None
            if mem is None:
                continue  # not this image's: the verifier counts it missing
            for i in range(0, len(mem), _CHUNK * 16):
                h.update(mem[i:i + _CHUNK * 16])
        else:
            _feed(h, p)
        d = mac.finish(h)
        total.update(name + b"\0" + d)
        out.append([name.decode(), hexlify(d).decode()])
    return {"files": out, "digest": hexlify(mac.finish(total)).decode()}


def seeded(seed_hex):
    """Host request over the raw REPL (service mode): the seeded answer."""
    from binascii import unhexlify

    _report(seeded_answer(unhexlify(seed_hex)))


def _makedirs(path):
    # Parents first; an existing directory is fine (os.mkdir raises EEXIST).
    parts = path.strip("/").split("/")
    cur = ""
    for part in parts:
        cur += "/" + part
        try:
            os.mkdir(cur)
        except OSError:
            pass


def begin(pending_text, dirs):
    """Start a flash: mark the manifest pending (listing the new files), make dirs."""
    write_manifest(pending_text)
    for d in dirs:
        _makedirs(d)
    _report({"ok": True})


def remove(paths):
    """Delete stale files (from an older firmware); a file already gone is fine."""
    for p in paths:
        try:
            os.remove(p)
        except OSError:
            pass


def commit(final_text):
    """Finish a flash: re-hash every file of final_text (the host's build); only if all
    match, write it as the manifest. Reports the mismatches either way."""
    _, entries = parse_manifest(final_text)
    bad = []
    for digest, fpath in entries:
        actual = file_sha256(fpath)
        if actual != digest:
            bad.append([fpath, actual])
    if not bad:
        write_manifest(final_text)
    _report({"ok": not bad, "bad": bad})
