# Authenticated configuration commands (game, paytable, house rules).
#
# Wire format (docs/journal.md):   auth <counter> <mac_hex> <command...>
#   mac_hex = HMAC-SHA256(board_key, "<counter> <command>") as 64 hex digits, where
#   <command> is the rest of the line after the MAC with its outer whitespace removed.
# The counter must be above the last one this board accepted, so a recorded command
# cannot be played again; it is saved (A/B record, pitboss.store.slots.Slots) *before* the
# command is reported as accepted, so a power cut can lose an acceptance (the command was
# never carried out; the host signs it again with a new counter) but never allow a replay.
#
# MicroPython has no hmac module, so HMAC (RFC 2104) is built on hashlib.sha256 (in
# pitboss.store.integrity); tests/host/test_auth.py checks it against CPython's hmac and RFC 4231. The per-board key is
# written at provisioning (provision() over the REPL, host_tools/table/auth.py) to flash and is
# only ever held in RAM as the two padded HMAC keys: nothing here returns or prints it.
import hashlib
from binascii import hexlify, unhexlify

from pitboss.store import integrity
from pitboss.compat import const
from pitboss.store.osfs import makedirs
from pitboss.store.slots import SlotCorrupt, Slots

_MAC_HEX = const(64)  # hex digits of a SHA-256 MAC
_COUNTER_DIGITS = const(15)  # < 2**53: also exact in a host's JSON/JavaScript
_COMMAND_MAX = const(512)
KEY_MIN = const(16)
KEY_MAX = const(128)

# Reasons verify() gives; all but "ok" are refusals to be logged.
OK = "ok"
REASONS = ("ok", "bad_format", "no_key", "key_corrupt", "counter_corrupt", "bad_mac",
           "replay", "store_error")


# One HMAC-SHA256 for the firmware: pitboss.store.integrity's (that module must stand alone,
# the host sends its source to boards that have no pitboss package yet).
Mac = integrity.Mac


def hmac_sha256(key, msg):
    return Mac(key).digest(msg)


def message(counter, command):
    """The bytes the MAC covers."""
    return ("%d %s" % (counter, command)).encode()


def equal(a, b):
    """Compare two byte strings in time that depends only on their length."""
    if len(a) != len(b):
        return False
    r = 0
    for i in range(len(a)):
        r |= a[i] ^ b[i]
    return r == 0


def _parse_counter(counter):
    if isinstance(counter, bool):
        return -1
    if isinstance(counter, int):
        return counter if 0 < counter < 10 ** _COUNTER_DIGITS else -1
    if not isinstance(counter, str) or not 0 < len(counter) <= _COUNTER_DIGITS:
        return -1
    for c in counter:
        if c < "0" or c > "9":
            return -1
    n = int(counter)
    return n if n > 0 else -1


def provision(key, path="/auth", fs=None):
    """Store the board's key (run over the REPL at provisioning). Written to both copies
    so the previous key does not linger on flash. A readable counter is kept (it never
    goes back); an unreadable one restarts at 0, which is safe only because the key is
    new: every MAC made before is useless. So always provision a fresh random key."""
    if not isinstance(key, (bytes, bytearray)) or not KEY_MIN <= len(key) <= KEY_MAX:
        raise ValueError("key must be %d..%d bytes" % (KEY_MIN, KEY_MAX))
    s = Slots(path + "/key", fs, max_size=KEY_MAX)
    makedirs(s.fs, path)
    try:
        s.load()
    except SlotCorrupt:
        pass  # a damaged old key is replaced like any other
    s.save(bytes(key))
    s.save(bytes(key))
    c = Slots(path + "/counter", s.fs, max_size=32)
    try:
        text = c.load()
        if text is not None:
            int(text)
    except (SlotCorrupt, ValueError):
        c.save("0")
    if fs is None:  # the board's own filesystem (a test's simulated one has no manifest)
        seal_manifest(path)


def _manifest_of(path):
    # The board's root holds /auth and /manifest.sha256; a host test's root holds both
    # under a folder (root + "/auth").
    if path.endswith("/auth"):
        return path[:-5] + integrity.MANIFEST
    return None


def seal_manifest(path="/auth"):
    """Seal the manifest under the key in `path` (pitboss.store.integrity: /manifest.mac). Run on
    the board after a flash re-hashed every file against the host's build, and at every
    provisioning. No key or no manifest: any old seal is removed (it cannot be right).
    Returns the seal's hex, or None."""
    import os

    manifest = _manifest_of(path)
    if manifest is None:
        return None
    seal = manifest[:-len(integrity.MANIFEST)] + integrity.SEAL
    text = integrity.read_manifest(manifest)
    a = Auth(path).load()
    if text is None or a._mac is None:
        try:
            os.remove(seal)
        except OSError:
            pass
        return None
    value = integrity.seal_of(a._mac, text)
    integrity.write_manifest(value + "\n", seal)  # temp + rename
    return value


class Auth:
    def __init__(self, path="/auth", fs=None):
        self.path = path
        self._fs = fs
        self._key = Slots(path + "/key", fs, max_size=KEY_MAX)
        self._ctr = Slots(path + "/counter", fs, max_size=32)
        self._mac = None
        self.counter = 0  # the last counter accepted
        self.failures = 0  # refusals in a row (RAM only): the controller's bad_mac tilt
        self.fault = "no_key"  # None once a key and counter are loaded

    def load(self):
        """Read the key and counter. Problems are not raised: they make every command
        refused with the reason in self.fault (no_key, key_corrupt, counter_corrupt);
        the controller tilts on key_corrupt/counter_corrupt (auth_store_corrupt)."""
        self._mac = None
        self.id = None  # the key's fingerprint (below)
        try:
            key = self._key.load()
        except SlotCorrupt:
            self.fault = "key_corrupt"
            return self
        if key is None:
            self.fault = "no_key"
            return self
        if not KEY_MIN <= len(key) <= KEY_MAX:
            self.fault = "key_corrupt"
            return self
        try:
            text = self._ctr.load()
            n = 0 if text is None else int(text)
            if n < 0:
                raise ValueError
        except (SlotCorrupt, ValueError):
            # Not knowing the last counter would allow replays: refuse everything until
            # re-provisioned (a new key makes every old MAC useless).
            self.fault = "counter_corrupt"
            return self
        self._mac = Mac(key)
        # 8 hex digits of SHA-256 of the key (as the host's key store prints it): the
        # host checks it names the right key before it sends any MAC (issue 29).
        self.id = hexlify(hashlib.sha256(key).digest()).decode()[:8]
        self.counter = n
        self.fault = None
        return self

    def restore_counter(self, n):
        """At boot: the journal saw counter n accepted but the counter record reads
        lower (its newest copy was damaged and an older generation was read). Save n, so
        the last accepted line stays a replay. Never lowers the counter."""
        if type(n) is int and n > self.counter:
            self._ctr.save("%d" % n)
            self.counter = n
        return self.counter

    def mac(self):
        """The Mac under the board's key (None without a valid key): for the firmware's
        own checks (the manifest seal, re-keying). Never the key itself."""
        return self._mac

    def rekey(self, counter, wrapped_hex, fingerprint):
        """Re-provision from production (an accepted `auth N MAC provision WRAPPED FP`):
        the new key travels wrapped, XORed with HMAC(current key, "pitboss-key-wrap N"),
        so it never crosses the serial line in clear; FP (8 hex digits of SHA-256 of the
        new key) proves it was unwrapped right. Stores it, reloads, reseals the
        manifest. Raises ValueError (nothing changed) on a bad argument."""
        mac = self._mac
        if mac is None:
            raise ValueError("no key to re-key from")
        try:
            wrapped = unhexlify(wrapped_hex)
        except (ValueError, TypeError):
            raise ValueError("the wrapped key is not hex")
        pad = mac.digest(("pitboss-key-wrap %d" % counter).encode())
        if len(wrapped) != len(pad):
            raise ValueError("the wrapped key must be %d bytes" % len(pad))
        key = bytes([wrapped[i] ^ pad[i] for i in range(len(pad))])
        fp = hexlify(hashlib.sha256(key).digest()).decode()[:8]
        if not isinstance(fingerprint, str) or fingerprint.lower() != fp:
            raise ValueError("fingerprint mismatch: the key was not unwrapped right")
        provision(key, self.path, self._fs)
        self.load()
        return fp

    def verify(self, command, counter, mac_hex):
        """-> (True, 'ok') after the counter is durably advanced, or (False, reason)."""
        ok, reason = self._verify(command, counter, mac_hex)
        self.failures = 0 if ok else self.failures + 1
        return ok, reason

    def _verify(self, command, counter, mac_hex):
        if self.fault is not None:
            return False, self.fault
        n = _parse_counter(counter)
        if n < 0:
            return False, "bad_format"
        if not isinstance(command, str) or not 0 < len(command) <= _COMMAND_MAX:
            return False, "bad_format"
        if isinstance(mac_hex, str):
            mac_hex = mac_hex.encode()
        if not isinstance(mac_hex, (bytes, bytearray)) or len(mac_hex) != _MAC_HEX:
            return False, "bad_format"
        try:
            given = unhexlify(bytes(mac_hex))
        except ValueError:
            return False, "bad_format"
        mac = self._mac
        if mac is None:
            return False, "no_key"
        # The MAC first, so a forged command is reported as bad_mac whatever its counter.
        if not equal(mac.digest(message(n, command)), given):
            return False, "bad_mac"
        if n <= self.counter:
            return False, "replay"
        try:
            self._ctr.save("%d" % n)
        except OSError:
            return False, "store_error"
        self.counter = n
        return True, OK

    def check_line(self, line):
        """Parse and verify 'auth <counter> <mac_hex> <command...>'.
        -> (ok, reason, command): command is the authenticated command text ('' if the
        line could not be parsed)."""
        if not isinstance(line, str):
            return False, "bad_format", ""
        line = line.strip()
        parts = line.split(None, 3)
        if len(parts) != 4 or parts[0] != "auth":
            self.failures += 1
            return False, "bad_format", ""
        command = parts[3].strip()
        ok, reason = self.verify(command, parts[1], parts[2])
        return ok, reason, command
