"""Which key in the host's store is this board's: asked of the board, not guessed.

A board's `version` reply carries its unique id (`unique_id`: the RP2040's flash id,
the ESP32's MAC, boards/*.py unique_id(); None on the virtual board) and its key's
fingerprint (`key_fingerprint`, 8 hex digits of SHA-256 of the key, as `pitboss provision` prints it). Before
any authenticated line is sent:

- with --board-id, the key of that name must have the board's fingerprint, or the command
  stops with one line saying so: a wrong key is never tried (three bad MACs tilt a
  table), issue 29;
- without it, the key is the store's `uid-<uid>`, else the one key whose fingerprint is
  the board's.

Provisioning without --board-id names the new key `uid-<uid>` (table1 on a board that
has no unique id).
"""
from host_tools.table.auth import KeyStoreError, fingerprint

DEFAULT = "table1"  # a board without a unique id, provisioned without --board-id


class KeyMismatch(KeyStoreError):
    """The store has no key for this board, or the one named is another board's."""


def identity(target):
    """(uid, key_fp) as the board reports them (None, None from older firmware)."""
    r = target.commands(["version"])[0]
    return r.get("unique_id"), r.get("key_fingerprint"), "key_fingerprint" in r


def keys_with(keys, fp):
    """The names of the store's current keys whose fingerprint is `fp`, sorted."""
    out = []
    if not keys.folder.is_dir():
        return out
    for p in sorted(keys.folder.glob("*.key")):
        try:
            if fingerprint(keys.load_key(p.stem)) == fp:
                out.append(p.stem)
        except (KeyStoreError, ValueError):
            continue
    return out


def choose(target, keys, board_id):
    """The name of this board's key in `keys`; KeyMismatch (one line) if there is none
    or --board-id names another board's key."""
    uid, fp, reports = identity(target)
    if not reports:  # firmware from before the board said its fingerprint: as before
        return board_id or DEFAULT
    who = "its key's fingerprint %s, its uid %s" % (fp or "none", uid or "none")
    if fp is None:
        raise KeyMismatch("this board has no key yet (uid %s): pitboss provision gives it "
                          "one" % (uid or "none"))
    if board_id:
        mine = fingerprint(keys.load_key(board_id))
        if mine != fp:
            raise KeyMismatch("the key for --board-id %s (fingerprint %s) is not this "
                              "board's (%s): nothing was sent; give the --board-id of its "
                              "key, or leave it out (the store is searched by fingerprint)"
                              % (board_id, mine, who))
        return board_id
    if uid and keys.key_path("uid-" + uid).exists():
        if fingerprint(keys.load_key("uid-" + uid)) == fp:
            return "uid-" + uid
    found = keys_with(keys, fp)
    if len(found) == 1:
        return found[0]
    raise KeyMismatch("no key in %s is this board's (%s): give --board-id, or provision "
                      "it" % (keys.folder, who))


def new_name(target):
    """The name `pitboss provision` gives a new key when no --board-id is given."""
    uid, _, _ = identity(target)
    return "uid-" + uid if uid else DEFAULT
