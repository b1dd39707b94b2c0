# Are the files on this board the ones the host flashed?
#
# The flasher (host_tools/flash.py) keeps /manifest.sha256 on the board, in sha256sum's
# format ("<hex>  <path>" per line) after one header line:
#     # pitboss-manifest board=pico mode=mpy state=complete
# It writes the new manifest with state=pending *before* copying anything and rewrites it
# as complete only after the board has re-hashed every file and all matched the host's
# build; so an interrupted flash leaves a board that reports itself broken, never one
# that silently runs half of each firmware. check() is what the firmware runs at boot.
#
# The host also sends this module's *source* to the board and calls the functions below
# (describe/begin/commit), so that a corrupted copy on the board never vouches for itself.
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
HEADER = "# pitboss-manifest"
PENDING = "pending"
COMPLETE = "complete"
# One read buffer for every file: hashing a whole firmware allocates a few small objects
# per file instead of a chunk per read. 512 = one flash sector read on littlefs/FAT.
_CHUNK = const(512)
_buf = None


def file_sha256(path):
    """Hex SHA-256 of the file's bytes, or None if it cannot be opened."""
    global _buf
    if _buf is None:
        _buf = bytearray(_CHUNK)
    buf = _buf
    h = hashlib.sha256()
    try:
        f = open(path, "rb")
    except OSError:
        return None
    try:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            # A full chunk is hashed as is; only the last, short one needs a slice.
            h.update(buf if n == _CHUNK else memoryview(buf)[:n])
    finally:
        f.close()
    return hexlify(h.digest()).decode()


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


def check(path=MANIFEST):
    """Re-hash every file the manifest lists. Returns a list of (path, problem), empty when
    all is well; problem is 'no manifest', 'pending' (a flash did not finish), 'missing',
    'mismatch' or 'malformed'."""
    text = read_manifest(path)
    if text is None:
        return [(path, "no manifest")]
    info, entries = parse_manifest(text)
    problems = []
    if info.get("state") != COMPLETE:
        problems.append((path, PENDING))
    for digest, fpath in entries:
        if not digest:
            problems.append((fpath, "malformed"))
            continue
        actual = file_sha256(fpath)
        if actual is None:
            problems.append((fpath, "missing"))
        elif actual != digest:
            problems.append((fpath, "mismatch"))
    return problems


# ---- called by the host through the REPL (host_tools/flash.py) ----------------------
# Each prints one line "PITBOSS-INTEGRITY <json>" that the host looks for in the output.


def _report(obj):
    import json

    print("PITBOSS-INTEGRITY " + json.dumps(obj))


def describe(paths):
    """What the host needs before a flash: port, .mpy ABI, manifest, hashes of `paths`."""
    import sys

    _report({
        "platform": sys.platform,
        "mpy": getattr(sys.implementation, "_mpy", 0),
        "version": list(sys.implementation.version[:3]),
        "manifest": read_manifest(),
        "hashes": {p: file_sha256(p) for p in paths},
    })


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
