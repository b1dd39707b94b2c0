"""Host side of the table controller: drive a board's bench protocol, deal rounds through
the (simulated) shoe, provision and configure with authenticated commands, recall rounds,
take screenshots.

A *target* runs the firmware's pitboss.app: `BoardTarget` on a board over the raw REPL,
`LocalTarget` in this CPython process (same firmware, simulated peripherals). A round is
planned once (wagers, dice, shoe frames, players' decisions) and can be played on both,
so the board's settlement can be checked against CPython's, amount by amount.
"""
import contextlib
import json
import os
import sys
import tempfile

import host_tools  # noqa: F401  (puts firmware/ on sys.path)
from host_tools import keyid, shoe_sim
from host_tools.argtypes import positive
from host_tools.auth import KeyStore, KeyStoreError, auth_line, fingerprint
from host_tools.boardlink import BoardError, open_board
from host_tools.protolink import LinkError
from host_tools.vboard import resolve_port
from pitboss import games
from pitboss.rules import profiles
from pitboss.rules.cards import names, parse_hand
from pitboss.sim.rng import Rng
from pitboss.games.table import Table

_APP = "import pitboss.hostapi as A\n"


class BoardTarget:
    def __init__(self, board):
        self.board = board

    def run(self, code):
        return self.board.call_lines(_APP + code)

    def commands(self, lines):
        return self.run("A.commands(%r)" % (list(lines),)) if lines else []

    def round(self, before, frames, after):
        """One exec per round: wagers + deal, the shoe's bytes, decisions + settle."""
        return self.run("A.commands(%r)\nA.feed_shoe(%r)\nA.poll()\nA.commands(%r)"
                        % (list(before), frames, list(after)))

    def rounds(self, plans, chunk=25):
        """Many planned rounds, `chunk` per exec: the last reply of each round."""
        out = []
        for i in range(0, len(plans), chunk):
            text = json.dumps([[b, f.decode(), a] for b, f, a in plans[i:i + chunk]])
            out += [json.loads(ln) for ln in self.board.exec(
                _APP + "A.play(%r)" % text, fast=self.board.device_is_virtual)
                .splitlines() if ln.strip()]
        return out

    def provision(self, key):
        self.board.exec("from binascii import unhexlify\nfrom pitboss.store import auth\n"
                        "auth.provision(unhexlify(%r))\n" % key.hex())
        self.run("A.app().ctl.auth.load()")

    def screen(self):
        return bytes.fromhex(self.board.exec(_APP + "A.screen()").strip())


class PicoTarget(BoardTarget):
    """The emulated Pico: the shoe's frames go onto UART1's wire at the shoe's baud rate
    through the emulator's control socket (not through the REPL), while the firmware polls
    its SerialShoe as the main loop would; the screenshot is the emulated SSD1306's own
    display RAM, i.e. what the driver's I2C traffic drew."""

    # Emulated ms the board keeps polling after the last card is due before giving up.
    POLL_MS = 2000

    def __init__(self, board):
        super().__init__(board)
        from host_tools.pico import control_for
        self.ctl = control_for(board.device)

    def deal(self, frames, cards):
        """Poll the shoe until `cards` cards are dealt (or it goes quiet), while the frames
        arrive on UART1; the replies in order."""
        code = (_APP + "import time, json\nout = []\nt = time.ticks_ms()\n"
                "while len(out) < %d and time.ticks_diff(time.ticks_ms(), t) < %d:\n"
                "    got = A.app().poll()\n    out += got\n"
                "    if got: t = time.ticks_ms()\n    time.sleep_ms(2)\n"
                "for r in out: print(json.dumps(r))\n" % (cards, self.POLL_MS))
        t, tr = self.board._t, self.board._tr
        try:
            t.exec_raw_no_follow(code)
            # The emulator's acknowledging shoe on UART1 (host_tools/pico/uart.mjs): one
            # frame at a time, resent until acknowledged. A shoe that streamed them would
            # lose bytes to the flash writes (45 ms erases with interrupts off) and the
            # round would be a misdeal (docs/shoe-protocol.md).
            self.ctl("shoe", id=1, hex=bytes(frames).hex(), wait=False)
            out, err = t.follow(self.board.timeout)
        except tr.TransportError as e:
            raise BoardError("lost the board on %s: %s" % (self.board.device, e)) from e
        if err:
            raise BoardError("board raised:\n" + err.decode().strip())
        return [json.loads(ln) for ln in out.decode().splitlines() if ln.strip()]

    def round(self, before, frames, after):
        out = self.commands(before)
        deal = [r for r in out if r.get("ok") and "order" in r]
        cards = len(deal[-1]["order"]) if deal else 1 << 20  # else: until quiet
        out += self.deal(frames, cards)
        return out + self.commands(after)

    def rounds(self, plans, chunk=25):
        out = []
        for before, frames, after in plans:
            replies = self.round(before, frames, after)
            bad = [r for r in replies if not r.get("ok")]
            out.append(bad[0] if bad else replies[-1])
        return out

    def screen(self):
        return self.ctl.display_ram()


def target_for(board):
    """The host-side driver for this board: PicoTarget on the emulated Pico."""
    return PicoTarget(board) if getattr(board, "kind", None) == "pico" else BoardTarget(board)


class ProtoTarget:
    """A running table over protocol lines (pitboss.app's main loop, in either mode): the
    host's commands are lines on the serial port, the shoe's frames go through the
    board's side channel into the shoe's UART (host_tools.sidechannel), dealt one at a
    time and resent until the controller acknowledges them. The table keeps playing
    while the host asks: nothing here stops its loop."""

    def __init__(self, port, link=None, control=None):
        from host_tools.protolink import ProtocolLink
        from host_tools.sidechannel import control_for

        self.port = port
        self.link = link or ProtocolLink(port)
        self.control = control if control is not None else control_for(port)
        self._seq = 0  # the simulated shoe's running frame count (it wraps at 65536)
        self._shoe = None

    def close(self):
        self.link.close()

    def commands(self, lines):
        return [self.link.request(ln, timeout=120) for ln in lines]

    def shoe(self):
        if self.control is None:
            raise BoardError("%s is a real board: its shoe deals the cards (a simulated "
                             "shoe needs an emulated board's side channel)" % self.port)
        if self._shoe is None:
            self._shoe = self.control.acking_shoe()
        return self._shoe

    def renumber(self, frames):
        """The shoe's frames (bytes from shoe_sim.frames) as a list, renumbered on the
        shoe's own running count (it counts on across rounds, as a real shoe does)."""
        cards = [int(frames[i + 1:i + 3], 16) for i in range(0, len(frames), 12)]
        fl = shoe_sim.frame_list(cards, self._seq)
        self._seq = (self._seq + len(fl)) & 0xFFFF
        return fl

    def deal(self, frames):
        """The shoe's frames, renumbered, each resent until acknowledged; the loop's card
        replies."""
        fl = self.renumber(frames)
        self.shoe().deal(fl)
        # Every frame is acknowledged, so every card is in: its line follows at once,
        # unless the shoe set the frame aside (a duplicate), which the settlement shows.
        return self.link.wait_events(len(fl), timeout=30, strict=False)

    def deal_asking(self, frames, lines):
        """As deal(), one frame at a time, the protocol `lines` sent after each frame is
        acknowledged (a host asking while the table deals): (card replies, their
        replies)."""
        shoe = self.shoe()
        fl = self.renumber(frames)
        asked = []
        for f in fl:
            shoe.deal_one(f)
            asked += self.commands(lines)
        return self.link.wait_events(len(fl), timeout=60, strict=False), asked

    def round(self, before, frames, after):
        out = self.commands(before)
        out += self.deal(frames)
        return out + self.commands(after)

    def rounds(self, plans):
        return [self.round(*pl)[-1] for pl in plans]

    def screen(self):
        first = self.commands(["screen 0"])[0]
        if not first.get("ok"):
            raise BoardError("screen: %s" % first["error"]["message"])
        parts = [first["hex"]] + [self.commands(["screen %d" % i])[0]["hex"]
                                  for i in range(1, first["of"])]
        return bytes.fromhex("".join(parts))

    def provision(self, key):
        """Service mode: the key is written over the raw REPL (mpremote breaks into the
        loop with Ctrl-C); closing that session soft-resets the board, so the loop runs
        again with the new key."""
        self.link.close()
        from host_tools.boardlink import Board

        b = Board(self.port)
        try:
            BoardTarget(b).provision(key)
        finally:
            b.close()
        from host_tools.protolink import ProtocolLink

        self.link = ProtocolLink(self.port)
        self.link.ready()


@contextlib.contextmanager
def open_table(port, set_clock=True):
    """A ProtoTarget on `port` ('virtual': a throw-away board, flashed first). The host
    sets the board's clock as it connects (`clock UNIX`, journalled)."""
    import time

    from host_tools.protolink import LinkError

    with resolve_port(port) as device:
        if port in ("virtual", "pico"):  # a throw-away board: flashed first
            from host_tools.flash import flash as do_flash
            do_flash(device, progress=None)
        try:
            t = ProtoTarget(device)
        except LinkError as e:
            raise BoardError(str(e))
        try:
            try:
                # An emulated Pico boots for seconds of wall time on a loaded machine (the
                # pitboss image hashes its program first): more than the 30 s default.
                from host_tools.vboard import board_kind
                t.link.ready(300 if board_kind(device) == "pico" else 30)
                if set_clock:
                    t.commands(["clock %d" % int(time.time())])
            except LinkError as e:
                raise BoardError(str(e))
            yield t
        finally:
            t.close()


def play_many(target, game, seats, rounds, seed):
    """Like play_rounds, batched where the target can: the settle replies in order."""
    plans = [plan_round(game, seats, seed + i) for i in range(rounds)]
    if isinstance(target, (BoardTarget, ProtoTarget)):   # PicoTarget too
        return target.rounds(plans)
    return [target.round(*pl)[-1] for pl in plans]


class LocalTarget:
    """The firmware in this process, storage in a temp folder, simulated peripherals."""

    def __init__(self, root=None, durable=True, production=False, region=None):
        """durable=False skips fsync (a reference run whose storage nobody relies on).
        production=True applies production's configuration rules (issue 30: no
        unverified default paytable); the twin is otherwise a service-mode table, as
        the virtual board's switch cannot be read here.
        region: callable(root, fs) -> the journal's flash region (pitboss.store.region), for a
        board that has one; default the virtual board's segment files."""
        import boards.virtual as hw
        from host_tools import framebuf_shim
        framebuf_shim.install()  # pitboss.app draws with framebuf; CPython has none
        from pitboss import app
        from pitboss.store.osfs import OsFS

        hw.reset()  # peripherals of its own, not another target's
        self._hw = hw
        self.root = root or tempfile.mkdtemp(prefix="pitboss-local-")
        fs = OsFS(durable=durable)
        self.app = app.App(self._hw, root=self.root, check_firmware=False, fs=fs,
                           region=region and region(self.root, fs))
        self.app.ctl.production = production

    def commands(self, lines):
        return [self.app.ctl.command(ln) for ln in lines]

    def screen(self):
        """The simulated SSD1306's own display RAM: what the driver's I2C writes drew."""
        return bytes(self._hw.display_device().ram)

    def round(self, before, frames, after):
        out = self.commands(before)
        self._hw.shoe_uart().feed(frames)
        out += self.app.poll()
        return out + self.commands(after)

    def provision(self, key):
        from pitboss.store import auth
        auth.provision(key, self.root + "/auth")
        self.app.ctl.auth.load()


class Configurator:
    """Authenticated configuration for one board: its key in the host's key store."""

    def __init__(self, target, board_id, keys=None):
        self.target = target
        self.board_id = board_id
        self.keys = keys or KeyStore()

    def provision(self, force=True):
        key = self.keys.provision(self.board_id, force=force)
        self.target.provision(key)
        return fingerprint(key)

    def signed(self, command):
        line = self.keys.sign(self.board_id, command)
        return self.target.commands([line])[0]

    def configure(self, game, seats, extra=None):
        cfg = dict(extra or {}, game=game, seats=seats)
        return self.signed("config " + json.dumps(cfg, separators=(",", ":")))


def stand_in_paytables(game):
    """A test table's own paytables where the game's defaults are unverified (which a
    production table refuses, issue 30): the default lines, given explicitly, as the
    table a casino configures. {} when every default is verified."""
    from pitboss.rules import paytables
    g = games.module(game)
    # the short form (odds in LINES order): the three tables as dicts make a config
    # line longer than the 512 characters an authenticated command may hold
    return {k: [paytables.DEFAULTS[k]["lines"].get(ln) for ln in paytables.LINES[k]]
            for k in g.PAYTABLES if not paytables.DEFAULTS[k]["verified"]}


def plan_round(game, seats, seed):
    """(before, frames, after) protocol lines and shoe bytes for one seeded round.

    Deterministic in the seed: wagers from pitboss.sim.rng, the dice rolled here (sent with
    `deal` to a game dealt with dice), the deck shuffled by host_tools.shoe_sim; each
    player decides as the game module's sim_decision() says. The game is asked through
    the registry (pitboss.games): nothing here knows which game it plans."""
    p = profiles.get(game)
    g = games.module(game)
    rng = Rng(seed)
    # A throw-away Table of the same firmware gives the casino deal order, and is dealt
    # the same cards so the simulated players see their hands.
    t = Table({"game": game, "seats": seats})
    before = []
    for s in range(1, seats + 1):
        w = g.sim_wagers(rng)
        t.wager(s, w)
        before.append("wager %d %s" % (s, " ".join("%s=%d" % (k, w[k]) for k in sorted(w))))
    dice = rng.below(6) + rng.below(6) + rng.below(6) + 3
    before.append("deal %d" % dice if g.DICE else "deal")
    order = t.deal(dice if g.DICE else None)["order"]
    deck = shoe_sim.shuffled_deck(seed, p.deck)[:len(order)]
    for c in deck:
        t.card_in(c)
    frames = shoe_sim.frames(deck)
    after = []
    for s in range(1, seats + 1):
        d = g.sim_decision(t, s)
        if d is not None:
            after.append(decision_line(s, d[0], d[1]))
    after.append("settle")
    return before, frames, after


def decision_line(seat, verb, ev):
    """The bench-protocol line for a seat's decision (an event of Table.decisions())."""
    if verb == "hw":
        return "houseway %d" % seat
    if verb == "decide":
        return "decide %d %s" % (seat, "play" if ev["play"] else "fold")
    if verb == "set":
        return "hand %d %s / %s" % (seat, " ".join(names(parse_hand(ev["high"]))),
                                    " ".join(names(parse_hand(ev["low"]))))
    raise ValueError("no protocol line for the decision %r" % (verb,))


def play_rounds(target, game, seats, rounds, seed, config=None):
    """Play `rounds` seeded rounds on a configured target; yields each settle reply."""
    for i in range(rounds):
        before, frames, after = plan_round(game, seats, seed + i)
        replies = target.round(before, frames, after)
        bad = [r for r in replies if not r.get("ok")]
        if bad:
            raise BoardError("round %d refused: %s" % (i + 1, bad[0]["error"]))
        yield replies[-1]


def describe_round(r):
    """Human-readable lines for one settled round."""
    out = ["round %d  %s" % (r["round"], r["game"])]
    if "banker" in r:
        b = r["banker"]
        out.append("  banker   %-20s | %-6s  %s / %s" % (
            " ".join(b["high"]), " ".join(b["low"]), b["high_category"], b["low_category"]))
    if "dealer" in r:
        d = r["dealer"]
        out.append("  dealer   %-20s  %s%s" % (" ".join(d["hand"]), d["category"],
                                              "" if d["qualifies"] else " (does not qualify)"))
    for s in r["seats"]:
        if "high" in s:
            hand = "%s | %s" % (" ".join(s["high"]), " ".join(s["low"]))
            cat = "%s / %s" % (s["high_category"], s["low_category"])
        else:
            hand = " ".join(s.get("hand") or s["cards"])
            cat = s.get("category", "")
        wag = ",".join("%s=%d" % (k, v) for k, v in sorted(s["wagers"].items()))
        out.append("  seat %d   %-27s %-28s %-22s %+d" % (
            s["seat"], hand, cat, wag, s["amount"]))
    out.append("  house net %+d" % r["house_net"])
    return out


# ---- command line ---------------------------------------------------------------------
def _keys(args):
    return KeyStore(args.keys) if getattr(args, "keys", None) else KeyStore()


class UsageError(Exception):
    """Bad input found on the host, before any board is touched."""


def _key_ready(args):
    """The key store, checked before connecting: a bad --board-id or a board never
    provisioned is the operator's input to fix, not something to find on the board."""
    keys = _keys(args)
    if args.board_id is None:  # found on the board by host_tools.keyid once connected
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


def cmd_table(args):
    for line in args.lines:
        # The loop answers nothing to an empty line (and a newline inside an argument
        # would make two lines and two replies): refused before the port is opened,
        # rather than waiting out the reply timeout (issue 29).
        if not line.strip() or "\n" in line or "\r" in line:
            return _fail("table: %r is not a protocol line: give one protocol line per "
                         "argument, not empty, no newlines" % line)
    refused = []
    try:
        with open_table(args.port) as t:
            for line, reply in zip(args.lines, t.commands(args.lines)):
                print(json.dumps(reply))  # the protocol's own JSON lines, one per line
                if not reply.get("ok", True):
                    refused.append((line, reply))
    except (BoardError, LinkError) as e:
        return _fail(e)
    if refused:  # the replies are on stdout; what went wrong, once, on stderr
        line, reply = refused[0]
        return _refused("%d of %d lines refused; %r: %s"
                        % (len(refused), len(args.lines), line.split(" ")[0],
                           reply.get("error", {}).get("message", reply)))
    return 0


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
        return _fail(e)
    try:
        with open_table(args.port) as t:
            if args.port in ("virtual", "pico"):
                Configurator(t, args.board_id, keys).provision()
            conf = Configurator(t, keyid.choose(t, keys, args.board_id), keys)
            playing = t.commands(["status"])[0].get("game")
            if playing and playing != args.game and not args.reconfigure:
                # A table of another game is not switched as a side effect (issue 29).
                return _fail("the table plays %s: --reconfigure switches it to %s (its "
                             "configuration changes, journalled), or give --game %s"
                             % (playing, args.game, playing))
            r = conf.configure(args.game, args.seats)
            if not r.get("ok"):
                return _fail("configuration refused: %s" % r["error"]["message"])
            from host_tools.progress import bar
            with bar(args.rounds, "rounds", "round") as shown:
                for res in play_rounds(t, args.game, args.seats, args.rounds, args.seed):
                    # JSON lines with --json (a settlement each), else the rounds as text
                    shown.write(json.dumps(res) if args.json else
                                "\n".join(describe_round(res)), file=sys.stdout)
                    shown.update()
    except (BoardError, OSError, KeyStoreError, LinkError) as e:
        return _fail(e)
    return 0


def cmd_recall(args):
    try:
        with open_table(args.port) as t:
            reply = t.commands(["recall %d" % args.n])[0]
    except (BoardError, LinkError) as e:
        return _fail(e)
    if not reply.get("ok"):
        return _refused("recall refused: %s" % reply["error"]["message"])
    if args.json:
        print(json.dumps(reply["rounds"]))
        return 0
    if not reply["rounds"]:
        print("no rounds recorded yet")
    for rec in reply["rounds"]:
        print("journal seq %d" % rec["seq"])
        print("\n".join(describe_round(rec["result"])))
    return 0


def cmd_export(args):
    """Every journal record not yet acknowledged, verified into an append-only store,
    then acknowledged (host_tools.export)."""
    from host_tools import export as ex
    try:
        keys = _key_ready(args)
    except UsageError as e:
        return _fail(e)
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
        return _fail(e)
    if r["damaged"]:
        sys.stderr.write("pitboss: warning: %s lines %s are not records that verify "
                         "under the key for %s: not trusted, left as they are\n"
                         % (r["store"], ",".join(map(str, r["damaged"])), args.board_id))
    if args.json:
        print(json.dumps(r))
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


def cmd_screenshot(args):
    from host_tools.outfile import check_out
    from host_tools.screenshot import save
    why = check_out(args.out, {".png"})  # it writes PNG only: x.jpg is refused, not faked
    if why:
        return _fail(why)
    try:
        with open_table(args.port) as t:
            buf = t.screen()
    except (BoardError, LinkError) as e:
        return _fail(e)
    save(args.out, buf)
    print("saved %s" % args.out)
    return 0


def cmd_provision(args):
    keys = _keys(args)
    try:
        path = keys.key_path(keyid.DEFAULT if args.board_id is None else args.board_id)
    except ValueError as e:
        return _fail("bad --board-id %r: %s" % (args.board_id, e))
    if args.board_id is not None and path.exists() and not args.force:
        # Checked before the board is touched: replacing the host's copy of a key the
        # board still holds would lock the operator out of it.
        return _fail("%s already has a key (%s); --force replaces it and keeps the old one"
                     % (args.board_id, path))
    from host_tools.protolink import PRODUCTION, LinkError, probe

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
        return _fail(e)
    if args.json:
        print(json.dumps({"board_id": args.board_id, "fingerprint": fp}))
    else:
        print("provisioned %s (key fingerprint %s)" % (args.board_id, fp))
    return 0


def _rekey_production(port, board_id, keys):
    """A production board has no REPL: it takes a new key only as an authenticated
    command under its current one (pitboss.store.auth.Auth.rekey). The new key is written
    aside first, so a crash after the board took it does not lose it."""
    import secrets

    from host_tools.auth import _write_private
    from host_tools.protolink import ProtocolLink

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
            return _fail("--settings is not valid JSON: %s" % e)
        if not isinstance(extra, dict):
            return _fail("--settings must be a JSON object ({...}), not %s"
                         % type(extra).__name__)
    r, rc = _with_key(args, lambda t, conf: conf.configure(args.game, args.seats, extra))
    if r is None:
        return rc
    return _answered(args, r, "configured %s, %d seats" % (args.game, args.seats))


def _with_key(args, act):
    """act(target, Configurator) on the table at --port, with this board's key (checked
    against the board before any MAC, host_tools.keyid) -> (its result, 0), or
    (None, exit code) after the one-line error."""
    try:
        keys = _key_ready(args)
    except UsageError as e:
        return None, _fail(e)
    try:
        with open_table(args.port) as t:
            return act(t, Configurator(t, keyid.choose(t, keys, args.board_id), keys)), 0
    except (BoardError, KeyStoreError, LinkError) as e:
        return None, _fail(e)


def _answered(args, reply, text):
    """An authenticated command's answer: the reply as JSON with --json, else one line of
    text; a refusal is one line on stderr and exit 1, nothing on stdout."""
    if not reply.get("ok"):
        return _refused("%s refused: %s" % (args.command, reply.get("error", {}).get(
            "message", reply)))
    print(json.dumps(reply) if args.json else text)
    return 0


def _refused(message):
    """The board answered but would not do it: one line on stderr, exit 1 (exit 2 is
    for input the host refused or a board it could not reach)."""
    sys.stderr.write("pitboss: %s\n" % message)
    return EXIT_REFUSED


EXIT_REFUSED = 1


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


def _ask(args, line):
    """One read-only protocol line's reply (in production as in service mode), or the
    exit code of its failure."""
    try:
        with open_table(args.port) as t:
            reply = t.commands([line])[0]
    except (BoardError, LinkError) as e:
        return None, _fail(e)
    if not reply.get("ok"):
        return None, _fail("%s refused: %s" % (line, reply["error"]["message"]))
    return reply, 0


def _report(args, line, fields, text):
    """A read-only protocol line, printed: its `fields` as one JSON object with --json,
    else text(reply, args)'s lines."""
    r, rc = _ask(args, line)
    if r is None:
        return rc
    if args.json:
        print(json.dumps({k: r[k] for k in fields}))
    else:
        print("\n".join(text(r, args)))
    return 0


def _meters_text(r, args):
    t = r["totals"]
    yield ("all games: %d rounds, wagered %d, paid %d, house net %d"
           % (t["rounds"], t["wagered"], t["paid"], t["wagered"] - t["paid"]))
    for g in sorted(r["games"]):
        m = r["games"][g]
        yield "%-20s %d rounds, wagered %d, paid %d" % (
            g, m.get("rounds", 0), m.get("wagered", 0), m.get("paid", 0))


def _tilt_text(r, args):
    if not r["active"]:
        yield "no tilt: the table plays"
    for a in r["active"]:
        yield "TILT %s: %s" % (a["code"], a.get("detail") or "")
    for e in r["log"][-args.log:] if args.log else ():
        yield "  log: %s" % json.dumps(e)


def cmd_meters(args):
    """The board's lifetime meters (in the table's smallest unit), per game."""
    return _report(args, "meters", ("totals", "games"), _meters_text)


def cmd_tilt(args):
    """The tilts that halt the table now, and the tilt log (raised and cleared)."""
    return _report(args, "tilt", ("active", "log"), _tilt_text)


def cmd_reset(args):
    """Restart the table's loop: a service board left at its REPL (plain mpremote use)
    soft-resets into /main.py; a loop that already answers is left alone."""
    from host_tools.protolink import ProtocolLink, restart_loop
    with resolve_port(args.port) as device:
        try:
            with ProtocolLink(device) as link:
                r = link.ready(3)
            print("the loop already runs on %s (%s mode): nothing to restart"
                  % (device, r.get("mode", "production")))
            return 0
        except LinkError:
            pass
        rebooted = False
        try:
            rebooted = restart_loop(device)
            with ProtocolLink(device) as link:
                r = link.ready()
        except LinkError as e:
            return _fail("reset: %s%s" % (e, "" if rebooted else
                                          " (the board did not say it rebooted)"))
    print("loop restarted on %s (%s mode)" % (device, r.get("mode", "production")))
    return 0


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
        return _refused(r)
    v = r["voided"]
    print(json.dumps(r) if args.json else
          "round %s voided (%s): wagers returned to seats %s" % (
              v.get("round"), v.get("void"), ", ".join(str(x["seat"]) for x in
                                                         v.get("seats", ())) or "none"))
    return 0


def _fail(e):
    """One line on stderr, exit 2 (a board's traceback is cut to its first and last
    lines: the exception is what the operator needs)."""
    sys.stderr.write("pitboss: %s\n" % one_line(e))
    return 2


def one_line(e):
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if len(lines) > 2:
        lines = [lines[0], lines[-1]]
    return " | ".join(lines) or type(e).__name__


def operator_id(text):
    """argparse type: the firmware's own check (pitboss.store.tilt.check_operator), so an id
    the board would split ("tech 1" became operator "tech", tilt code "1") is refused
    on the host before any line is sent."""
    import argparse

    from pitboss.store.tilt import check_operator
    try:
        return check_operator(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def tilt_code(text):
    import argparse

    from pitboss.store.tilt import CODES
    if text not in CODES:
        raise argparse.ArgumentTypeError("unknown tilt code %r (docs/protocol.md lists "
                                         "them)" % text)
    return text


def add_table_commands(sub):
    def board_args(p, key=False):
        p.add_argument("--port", required=True,
                       help="a serial device, virtual or pico (a throw-away emulated "
                            "board), board:NAME (a kept one) or auto")
        if key:
            p.add_argument("--board-id", default=os.environ.get("PITBOSS_BOARD"),
                           help="which key in the key store (default: the one the board "
                                "names: uid-<its unique id>, or the key with its "
                                "fingerprint; checked against the board before use)")
            p.add_argument("--keys", help="key store folder (default ~/.pitboss/keys)")

    p = sub.add_parser("meters", help="the board's lifetime meters, per game")
    board_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(func=cmd_meters)

    p = sub.add_parser("tilt", help="the tilts halting the table, and the tilt log")
    board_args(p)
    p.add_argument("--log", type=int, default=10, metavar="N",
                   help="the last N log entries (default 10; 0: none)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(func=cmd_tilt)

    p = sub.add_parser("reset", help="restart the table's loop (a service board left "
                       "at its REPL)")
    board_args(p)
    p.set_defaults(func=cmd_reset)

    p = sub.add_parser("table", help="send bench-protocol lines to a board")
    board_args(p)
    p.add_argument("lines", nargs="+", help="one protocol line per argument")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("shoe", help="deal seeded rounds through the board's shoe input")
    board_args(p, key=True)
    p.add_argument("--game", "-g", required=True)
    p.add_argument("--seats", type=positive, default=3)
    p.add_argument("--rounds", type=positive, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true",
                   help="each round's settlement as a JSON line instead of text")
    p.add_argument("--reconfigure", action="store_true",
                   help="configure the table for --game even if it plays another game")
    p.set_defaults(func=cmd_shoe)

    p = sub.add_parser("recall", help="the last rounds from the board's journal")
    board_args(p)
    p.add_argument("n", nargs="?", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("export", help="copy the journal records not yet acknowledged to "
                       "an append-only store, verified, then acknowledge them")
    board_args(p, key=True)
    p.add_argument("--store", help="folder of the store (BOARD.jsonl; default "
                   "~/.pitboss/export)")
    p.add_argument("--json", action="store_true", help="one JSON object: what was stored")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("screenshot", help="save what the table display shows as a PNG")
    board_args(p)
    p.add_argument("out")
    p.set_defaults(func=cmd_screenshot)

    p = sub.add_parser("provision", help="give a board a new authentication key")
    board_args(p, key=True)
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--force", action="store_true",
                   help="replace the host's key for --board-id (the old one is kept, "
                        "renamed with a timestamp)")
    p.set_defaults(func=cmd_provision)

    p = sub.add_parser("config", help="configure the table (authenticated)")
    board_args(p, key=True)
    p.add_argument("--game", "-g", required=True)
    p.add_argument("--seats", type=int, required=True)
    p.add_argument("--settings", metavar="JSON",
                   help="more configuration: house rules, paytables (a JSON object)")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("void", help="void the round that lost a card, its wagers "
                       "returned (authenticated: the tilt-clear of its misdeal)")
    board_args(p, key=True)
    p.add_argument("--operator", required=True, type=operator_id,
                   help="who voids it: 1 to 32 letters, digits and _.-@")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    p.set_defaults(func=cmd_void)

    p = sub.add_parser("tilt-clear", help="clear a tilt (authenticated, logged)")
    board_args(p, key=True)
    p.add_argument("--operator", required=True, type=operator_id,
                   help="who clears it: 1 to 32 letters, digits and _.-@")
    p.add_argument("--code", type=tilt_code, help="clear only this tilt")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    p.set_defaults(func=cmd_tilt_clear)
