"""The table commands that need the board's key (host_tools.table.auth's key store): `shoe`,
`export`, `provision`, `config`, `void` and `tilt-clear`. host_tools.table.readonly
registers them with the others.
"""
import json
import os
import sys
import tempfile

from host_tools.deploy.ready import open_board
from host_tools.link.protolink import LinkError
from host_tools.output import EXIT_REFUSED, BoardError, emit, fail, refused
from host_tools.table import keyid
from host_tools.table.auth import KeyStore, KeyStoreError, fingerprint
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import describe_round, play_rounds
from host_tools.table.targets import open_table, target_for


def _keys(args):
    return KeyStore(args.keys) if getattr(args, "keys", None) else KeyStore()


class UsageError(Exception):
    """Bad input found on the host, before any board is touched."""


def _key_ready(args):
    """The key store, checked before connecting: a bad --board-id or a board never
    provisioned is the operator's input to fix, not something to find on the board."""
    keys = _keys(args)
    if args.board_id is None:  # found on the board by host_tools.table.keyid once connected
        if not any(keys.folder.glob("*.key")):
            raise UsageError("no keys in %s (provision it first)" % keys.folder)
        return keys
    try:
        keys.load_key(args.board_id)
    except ValueError as e:  # a --board-id the key store cannot name a file after
        raise UsageError("bad --board-id %r: %s" % (args.board_id, e))
    except KeyStoreError as e:
        raise UsageError(e)
    return keys


def cmd_shoe(args):
    """Simulated shoe: deal seeded rounds to the board through its shoe input."""
    try:
        if args.port in ("virtual", "pico"):  # a throw-away board gets a throw-away key
            keys = KeyStore(tempfile.mkdtemp(prefix="pitboss-keys-"))
            args.board_id = args.board_id or keyid.DEFAULT
            keys.key_path(args.board_id)  # the id must still be a valid name
        else:
            keys = _key_ready(args)
    except (UsageError, ValueError) as e:
        return fail(e)
    try:
        with open_table(args.port) as t:
            if args.port in ("virtual", "pico"):
                Configurator(t, args.board_id, keys).provision()
            conf = Configurator(t, keyid.choose(t, keys, args.board_id), keys)
            st = t.commands(["status"])[0]
            playing = st.get("game")
            game = args.game or playing
            if game is None:
                return fail("the table has no game yet: give --game (pitboss games "
                            "lists them)")
            if playing and playing != game and not args.reconfigure:
                # A table of another game is not switched as a side effect (issue 29).
                return fail("the table plays %s: --reconfigure switches it to %s (its "
                            "configuration changes, journalled), or give --game %s"
                            % (playing, game, playing))
            has = st.get("table_seats") if playing == game else None
            seats = args.seats or has or 3
            # Nor is the table it plays reconfigured (which would drop the house rules and
            # paytables `pitboss config --settings` gave it) when it has these seats and
            # no round in play; else the configuration starts the rounds afresh.
            if (args.reconfigure or seats != has
                    or st.get("phase") not in ("configured", "settled")):
                r = conf.configure(game, seats)
                if not r.get("ok"):
                    return fail("configuration refused: %s" % r["error"]["message"])
            from host_tools.progress import bar
            with bar(args.rounds, "rounds", "round") as shown:
                for res in play_rounds(t, game, seats, args.rounds, args.seed):
                    # JSON lines with --json (a settlement each), else the rounds as text
                    shown.write(json.dumps(res) if args.json else
                                "\n".join(describe_round(res)), file=sys.stdout)
                    shown.update()
    except (BoardError, OSError, KeyStoreError, LinkError) as e:
        return fail(e)
    return 0


def cmd_export(args):
    """Every journal record not yet acknowledged, verified into an append-only store,
    then acknowledged (host_tools.table.export)."""
    from host_tools.table import export as ex
    try:
        keys = _key_ready(args)
    except UsageError as e:
        return fail(e)
    folder = args.store or os.path.join(_state_home(), "export")
    try:
        # Protocol lines to the running loop, in production as in service mode (the
        # board streams its export reply: pitboss.verbs.records.ExportRows): no REPL needed.
        with open_table(args.port) as t:
            args.board_id = keyid.choose(t, keys, args.board_id)
            from host_tools.progress import bar
            with bar(None, "export", "record") as shown:
                r = ex.export(t, keys, args.board_id, folder, shown=shown)
    except (BoardError, KeyStoreError, LinkError, ex.ExportError, OSError,
            ValueError) as e:
        return fail(e)
    if r["damaged"]:
        sys.stderr.write("pitboss: warning: %s lines %s are not records that verify "
                         "under the key for %s: not trusted, left as they are\n"
                         % (r["store"], ",".join(map(str, r["damaged"])), args.board_id))
    if args.json:
        emit(r)
    elif r["exported"]:
        print("exported %d records (seq %d..%d) into %s; the board acknowledged up to %d"
              % (r["exported"], r["first"], r["last"], r["store"], r["acked"]))
    else:
        print("nothing new to export (the board acknowledged up to %d); store %s"
              % (r["acked"], r["store"]))
    return 0


def _state_home():
    # Beside the key store by default: the export belongs to the operator, not the checkout.
    return os.environ.get("PITBOSS_HOME") or os.path.join(os.path.expanduser("~"), ".pitboss")


def cmd_provision(args):
    keys = _keys(args)
    try:
        path = keys.key_path(keyid.DEFAULT if args.board_id is None else args.board_id)
    except ValueError as e:
        return fail("bad --board-id %r: %s" % (args.board_id, e))
    if args.board_id is not None and path.exists() and not args.force:
        # Checked before the board is touched: replacing the host's copy of a key the
        # board still holds would lock the operator out of it.
        return fail("%s already has a key (%s); --force replaces it and keeps the old one"
                    % (args.board_id, path))
    from host_tools.link.protolink import PRODUCTION, LinkError, probe

    try:
        if args.port not in ("virtual", "pico") and probe(args.port) == PRODUCTION:
            if args.board_id is None:  # re-keyed under its current key: found by it
                with open_table(args.port, set_clock=False) as t:
                    args.board_id = keyid.choose(t, keys, None)
            fp = _rekey_production(args.port, args.board_id, keys)
        else:
            with open_board(args.port) as b:
                target = target_for(b)
                if args.board_id is None:  # named by the board's unique id
                    args.board_id = keyid.new_name(target)
                    if keys.key_path(args.board_id).exists() and not args.force:
                        raise UsageError(
                            "%s already has a key (%s); --force replaces it and keeps the "
                            "old one" % (args.board_id, keys.key_path(args.board_id)))
                conf = Configurator(target, args.board_id, keys)
                fp = conf.provision(force=args.force)
    except (BoardError, FileExistsError, KeyStoreError, LinkError, UsageError) as e:
        return fail(e)
    if args.json:
        emit({"board_id": args.board_id, "fingerprint": fp})
    else:
        print("provisioned %s (key fingerprint %s)" % (args.board_id, fp))
    return 0


def _rekey_production(port, board_id, keys):
    """A production board has no REPL: it takes a new key only as an authenticated
    command under its current one (pitboss.store.auth.Auth.rekey). The new key is written
    aside first, so a crash after the board took it does not lose it."""
    import secrets

    from host_tools.table.auth import _write_private
    from host_tools.link.protolink import ProtocolLink

    try:
        keys.load_key(board_id)
    except KeyStoreError as e:
        raise UsageError("a production board is re-provisioned under its current key: %s"
                         % e)
    new = secrets.token_bytes(32)
    aside = keys.key_path(board_id).with_name(keys.key_path(board_id).name + ".new")
    _write_private(aside, new.hex() + "\n", exclusive=False)
    with ProtocolLink(port) as link:
        r = link.request(keys.rekey_line(board_id, new), timeout=60)
    if not r.get("ok"):
        aside.unlink()
        raise UsageError("the board refused the new key: %s" % r["error"]["message"])
    keys.install(board_id, new)
    aside.unlink()
    return fingerprint(new)


def cmd_config(args):
    extra = None
    if args.settings:
        try:
            extra = json.loads(args.settings)
        except ValueError as e:
            return fail("--settings is not valid JSON: %s" % e)
        if not isinstance(extra, dict):
            return fail("--settings must be a JSON object ({...}), not %s"
                        % type(extra).__name__)
    r, rc = _with_key(args, lambda t, conf: conf.configure(args.game, args.seats, extra))
    if r is None:
        return rc
    return _answered(args, r, "configured %s, %d seats" % (args.game, args.seats))


def _with_key(args, act):
    """act(target, Configurator) on the table at --port, with this board's key (checked
    against the board before any MAC, host_tools.table.keyid) -> (its result, 0), or
    (None, exit code) after the one-line error."""
    try:
        keys = _key_ready(args)
    except UsageError as e:
        return None, fail(e)
    try:
        with open_table(args.port) as t:
            return act(t, Configurator(t, keyid.choose(t, keys, args.board_id), keys)), 0
    except (BoardError, KeyStoreError, LinkError) as e:
        return None, fail(e)


def _answered(args, reply, text):
    """An authenticated command's answer: the reply as JSON with --json, else one line of
    text; a refusal is one line on stderr and exit 1, nothing on stdout."""
    if not reply.get("ok"):
        return refused("%s refused: %s" % (args.command, reply.get("error", {}).get(
            "message", reply)))
    print(json.dumps(reply) if args.json else text)
    return 0


def cmd_tilt_clear(args):
    cmd = "tilt-clear %s%s" % (args.operator, " " + args.code if args.code else "")
    r, rc = _with_key(args, lambda t, conf: conf.signed(cmd))
    if r is None:
        return rc
    cleared = r.get("cleared") or []
    text = ("cleared %s" % ", ".join(c if isinstance(c, str) else c.get("code", "?")
                                     for c in cleared)) if cleared else "nothing to clear"
    if r.get("voided"):
        text += "; round %s voided, wagers returned" % r["voided"].get("round")
    return _answered(args, r, text)


def void_round(target, conf, operator):
    """Void the round that lost a card (a misdeal): the authenticated tilt-clear that
    returns its wagers, sent only when the board says a round is lost, so it never
    clears a tilt as a side effect. -> (exit code, text or reply)."""
    st = target.commands(["status"])[0]
    if not st.get("lost"):
        return EXIT_REFUSED, "no round lost a card: nothing to void (tilts: %s)" % (
            ", ".join(a["code"] for a in st.get("tilts", ())) or "none")
    r = conf.signed("tilt-clear %s" % operator)
    if not r.get("ok") or not r.get("voided"):
        return EXIT_REFUSED, "void refused: %s" % r.get("error", {}).get("message", r)
    return 0, r


def cmd_void(args):
    got, rc = _with_key(args, lambda t, conf: void_round(t, conf, args.operator))
    if got is None:
        return rc
    rc, r = got
    if rc:
        return refused(r)
    v = r["voided"]
    print(json.dumps(r) if args.json else
          "round %s voided (%s): wagers returned to seats %s" % (
              v.get("round"), v.get("void"), ", ".join(str(x["seat"]) for x in
                                                         v.get("seats", ())) or "none"))
    return 0
