"""Host side of authenticated table commands (firmware: pitboss/store/auth.py).

A board accepts a configuration command only as

    auth <counter> <mac_hex> <command...>

with mac_hex = HMAC-SHA256(board key, "<counter> <command>") and a counter above the last
one the board accepted. This module keeps each board's key and last counter in a host
folder (default ~/.pitboss/keys, or $PITBOSS_KEYS; the folder 0700, the files 0600):

    python -m host_tools.table.auth provision BOARD          # new random key -> BOARD.key
    python -m host_tools.table.auth board-script BOARD OUT   # MicroPython that stores it on the
                                                       # board (run it over the REPL once)
    python -m host_tools.table.auth sign BOARD [--board-last N] COMMAND...   # prints the line

The key is never printed; `provision` shows a fingerprint (first 8 hex digits of the
SHA-256 of the key) to compare with the provisioning record.
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import re
import secrets
import sys
import time
from pathlib import Path

KEY_BYTES = 32
_BOARD = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_COUNTER_MAX = 10 ** 15  # the board refuses counters with more than 15 digits


class KeyStoreError(Exception):
    """A key or counter file is missing, unsafe or damaged."""


def mac_hex(key: bytes, counter: int, command: str) -> str:
    """The MAC the board expects for `command` with `counter`."""
    if isinstance(counter, bool) or not isinstance(counter, int) or \
            not 0 < counter < _COUNTER_MAX:
        raise ValueError("counter must be 1..10**15-1")
    command = command.strip()
    if not command:
        raise ValueError("empty command")
    return hmac.new(key, b"%d %s" % (counter, command.encode()), hashlib.sha256).hexdigest()


def auth_line(key: bytes, counter: int, command: str) -> str:
    command = command.strip()
    return "auth %d %s %s" % (counter, mac_hex(key, counter, command), command)


def rekey_command(old_key: bytes, counter: int, new_key: bytes) -> str:
    """The authenticated command that gives a production board `new_key` (firmware:
    pitboss.store.auth.Auth.rekey): the key XORed with HMAC(old key, "pitboss-key-wrap N"), so
    it never crosses the serial line in clear, and its fingerprint."""
    pad = hmac.new(old_key, b"pitboss-key-wrap %d" % counter, hashlib.sha256).digest()
    if len(new_key) != len(pad):
        raise ValueError("a re-provisioned key is %d bytes" % len(pad))
    wrapped = bytes(a ^ b for a, b in zip(new_key, pad))
    return "provision %s %s" % (wrapped.hex(), fingerprint(new_key))


def fingerprint(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:8]


def default_dir() -> Path:
    """$PITBOSS_KEYS, else keys/ in $PITBOSS_HOME (the README says they sit together),
    else ~/.pitboss/keys."""
    env = os.environ.get("PITBOSS_KEYS")
    if env:
        return Path(env)
    home = os.environ.get("PITBOSS_HOME")
    return Path(home) / "keys" if home else Path.home() / ".pitboss" / "keys"


def _write_private(path: Path, text: str, exclusive: bool) -> None:
    """Write a 0600 file; exclusive=True refuses to replace an existing one. Non-exclusive
    writes go to a temp file and are renamed over, so a crash leaves old or new."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    target = path if exclusive else path.with_name(path.name + ".tmp")
    if not exclusive:
        try:
            target.unlink()
        except FileNotFoundError:
            pass
    fd = os.open(target, flags, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    if not exclusive:
        os.replace(target, path)


class KeyStore:
    def __init__(self, folder: str | os.PathLike | None = None):
        self.folder = Path(folder) if folder is not None else default_dir()

    def _board(self, board: str) -> str:
        if not isinstance(board, str) or not _BOARD.match(board):
            raise ValueError("board name must be 1..64 of letters, digits, _ . -")
        return board

    def key_path(self, board: str) -> Path:
        return self.folder / (self._board(board) + ".key")

    def counter_path(self, board: str) -> Path:
        return self.folder / (self._board(board) + ".counter")

    def _ensure_folder(self) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)

    def provision(self, board: str, force: bool = False) -> bytes:
        """Generate and store a new key for `board`; returns it (for the board script).
        Refuses to replace an existing key unless force=True."""
        path = self.key_path(board)
        self._ensure_folder()
        key = secrets.token_bytes(KEY_BYTES)
        if path.exists():
            if not force:
                raise FileExistsError("%s exists: the board may still hold that key "
                                      "(--force replaces it, keeping the old one)" % path)
            self.retire(board)
        _write_private(path, key.hex() + "\n", exclusive=True)
        return key

    def retire(self, board: str) -> Path:
        """Keep the current key as <board>.key.<UTC timestamp> (never overwritten): a
        board that did not take the new key can still be reached with the old one."""
        path = self.key_path(board)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for n in range(1000):
            old = path.with_name("%s.%s%s" % (path.name, stamp, "-%d" % n if n else ""))
            if not old.exists():
                os.rename(path, old)
                return old
        raise KeyStoreError("too many retired keys for %s at %s" % (board, stamp))

    def retired(self, board: str) -> list:
        """The retired keys of `board`, oldest first."""
        name = self.key_path(board).name + "."
        return sorted(p for p in self.folder.glob(name + "*") if not p.name.endswith(".tmp"))

    def load_key(self, board: str) -> bytes:
        path = self.key_path(board)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise KeyStoreError("no key for %s in %s (provision it first)" % (board, self.folder))
        if st.st_mode & 0o077:
            raise KeyStoreError("%s is readable by others (mode %o): chmod 600 it"
                            % (path, st.st_mode & 0o777))
        try:
            key = bytes.fromhex(path.read_text().strip())
        except ValueError:
            raise KeyStoreError("%s is not a hex key" % path)
        if not 16 <= len(key) <= 128:
            raise KeyStoreError("%s: key of %d bytes" % (path, len(key)))
        return key

    def last_counter(self, board: str) -> int:
        try:
            return int(json.loads(self.counter_path(board).read_text())["last"])
        except FileNotFoundError:
            return 0
        except (ValueError, KeyError, TypeError):
            raise KeyStoreError("%s is damaged" % self.counter_path(board))

    def next_counter(self, board: str, board_last: int = 0) -> int:
        """A counter above both what this host used and what the board reports; stored
        before it is returned, so a crash never hands out the same counter twice."""
        n = max(self.last_counter(board), int(board_last)) + 1
        if n >= _COUNTER_MAX:
            raise ValueError("counter exhausted")
        self._ensure_folder()
        _write_private(self.counter_path(board), json.dumps({"last": n}) + "\n",
                       exclusive=False)
        return n

    def rekey_line(self, board: str, new_key: bytes, board_last: int = 0) -> str:
        """`auth N MAC provision WRAPPED FP` for a production board, under the current key."""
        key = self.load_key(board)
        n = self.next_counter(board, board_last)
        return auth_line(key, n, rekey_command(key, n, new_key))

    def install(self, board: str, key: bytes) -> None:
        """Store `key` as the board's key, retiring the current one (after the board took
        it: re-provisioning from production)."""
        self._ensure_folder()
        if self.key_path(board).exists():
            self.retire(board)
        _write_private(self.key_path(board), key.hex() + "\n", exclusive=True)

    def sign(self, board: str, command: str, board_last: int = 0) -> str:
        key = self.load_key(board)
        return auth_line(key, self.next_counter(board, board_last), command)


def board_script(key: bytes) -> str:
    """MicroPython source that stores `key` on a board (run once over the raw REPL, e.g.
    `mpremote run FILE`). It contains the key: keep the file private and delete it."""
    if not 16 <= len(key) <= 128:
        raise ValueError("key must be 16..128 bytes")
    return ("from binascii import unhexlify\n"
            "from pitboss.store import auth\n"
            "auth.provision(unhexlify(%r))\n"
            "print('PITBOSS-AUTH provisioned %s')\n" % (key.hex(), fingerprint(key)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m host_tools.table.auth", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="key folder (default $PITBOSS_KEYS or ~/.pitboss/keys)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("provision", help="make a new key for a board")
    p.add_argument("board")
    p.add_argument("--force", action="store_true", help="replace an existing key")
    p = sub.add_parser("board-script", help="write the MicroPython that stores the key")
    p.add_argument("board")
    p.add_argument("out")
    p = sub.add_parser("sign", help="print the auth line for a command")
    p.add_argument("board")
    p.add_argument("--board-last", type=int, default=0,
                   help="the last counter the board accepted, if it is ahead of this host")
    p.add_argument("command", nargs="+")
    a = ap.parse_args(argv)
    ks = KeyStore(a.dir)
    try:
        if a.cmd == "provision":
            key = ks.provision(a.board, a.force)
            print("provisioned %s: %s (fingerprint %s)" % (a.board, ks.key_path(a.board),
                                                           fingerprint(key)))
        elif a.cmd == "board-script":
            _write_private(Path(a.out), board_script(ks.load_key(a.board)),
                           exclusive=not Path(a.out).exists())
            print("wrote %s (contains the key: delete it after use)" % a.out)
        else:
            print(ks.sign(a.board, " ".join(a.command), a.board_last))
    except (KeyStoreError, FileExistsError, ValueError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
