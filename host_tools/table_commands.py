"""The table commands (`pitboss meters|tilt|reset|table|shoe|recall|export|screenshot|
provision|config|void|tilt-clear`): protocol lines to the running loop, in production as
in service mode. The ones that need the board's key are host_tools.keyed_commands;
add_table_commands() registers them all.
"""
import json
import os

import host_tools  # noqa: F401  (puts firmware/ on sys.path)
from host_tools import keyed_commands as keyed
from host_tools.argtypes import positive
from host_tools.cli_errors import fail, refused
from host_tools.errors import BoardError
from host_tools.protolink import LinkError
from host_tools.rounds import describe_round
from host_tools.table_targets import open_table
from host_tools.vboard import resolve_port


def cmd_table(args):
    for line in args.lines:
        # The loop answers nothing to an empty line (and a newline inside an argument
        # would make two lines and two replies): refused before the port is opened,
        # rather than waiting out the reply timeout (issue 29).
        if not line.strip() or "\n" in line or "\r" in line:
            return fail("table: %r is not a protocol line: give one protocol line per "
                        "argument, not empty, no newlines" % line)
    refusals = []
    try:
        with open_table(args.port) as t:
            for line, reply in zip(args.lines, t.commands(args.lines)):
                print(json.dumps(reply))  # the protocol's own JSON lines, one per line
                if not reply.get("ok", True):
                    refusals.append((line, reply))
    except (BoardError, LinkError) as e:
        return fail(e)
    if refusals:  # the replies are on stdout; what went wrong, once, on stderr
        line, reply = refusals[0]
        return refused("%d of %d lines refused; %r: %s"
                       % (len(refusals), len(args.lines), line.split(" ")[0],
                          reply.get("error", {}).get("message", reply)))
    return 0


def cmd_recall(args):
    try:
        with open_table(args.port) as t:
            reply = t.commands(["recall %d" % args.n])[0]
    except (BoardError, LinkError) as e:
        return fail(e)
    if not reply.get("ok"):
        return refused("recall refused: %s" % reply["error"]["message"])
    if args.json:
        print(json.dumps(reply["rounds"]))
        return 0
    if not reply["rounds"]:
        print("no rounds recorded yet")
    for rec in reply["rounds"]:
        print("journal seq %d" % rec["seq"])
        print("\n".join(describe_round(rec["result"])))
    return 0


def cmd_screenshot(args):
    from host_tools.outfile import check_out
    from host_tools.screenshot import save
    why = check_out(args.out, {".png"})  # it writes PNG only: x.jpg is refused, not faked
    if why:
        return fail(why)
    try:
        with open_table(args.port) as t:
            buf = t.screen()
    except (BoardError, LinkError) as e:
        return fail(e)
    save(args.out, buf)
    print("saved %s" % args.out)
    return 0


def _ask(args, line):
    """One read-only protocol line's reply (in production as in service mode), or the
    exit code of its failure."""
    try:
        with open_table(args.port) as t:
            reply = t.commands([line])[0]
    except (BoardError, LinkError) as e:
        return None, fail(e)
    if not reply.get("ok"):
        return None, fail("%s refused: %s" % (line, reply["error"]["message"]))
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
            return fail("reset: %s%s" % (e, "" if rebooted else
                                         " (the board did not say it rebooted)"))
    print("loop restarted on %s (%s mode)" % (device, r.get("mode", "production")))
    return 0


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
    p.set_defaults(func=keyed.cmd_shoe)

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
    p.set_defaults(func=keyed.cmd_export)

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
    p.set_defaults(func=keyed.cmd_provision)

    p = sub.add_parser("config", help="configure the table (authenticated)")
    board_args(p, key=True)
    p.add_argument("--game", "-g", required=True)
    p.add_argument("--seats", type=int, required=True)
    p.add_argument("--settings", metavar="JSON",
                   help="more configuration: house rules, paytables (a JSON object)")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    p.set_defaults(func=keyed.cmd_config)

    p = sub.add_parser("void", help="void the round that lost a card, its wagers "
                       "returned (authenticated: the tilt-clear of its misdeal)")
    board_args(p, key=True)
    p.add_argument("--operator", required=True, type=operator_id,
                   help="who voids it: 1 to 32 letters, digits and _.-@")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    p.set_defaults(func=keyed.cmd_void)

    p = sub.add_parser("tilt-clear", help="clear a tilt (authenticated, logged)")
    board_args(p, key=True)
    p.add_argument("--operator", required=True, type=operator_id,
                   help="who clears it: 1 to 32 letters, digits and _.-@")
    p.add_argument("--code", type=tilt_code, help="clear only this tilt")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    p.set_defaults(func=keyed.cmd_tilt_clear)
