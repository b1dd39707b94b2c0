"""The table commands (`pitboss meters|tilt|reset|table|shoe|recall|export|screenshot|
provision|config|void|tilt-clear`): protocol lines to the running loop, in production as
in service mode. The ones that need the board's key are host_tools.table.keyed;
host_tools.commands lists them all.
"""
import json

from host_tools.link.ports import resolve_port
from host_tools.link.protolink import LinkError
from host_tools.output import BoardError, emit, fail, refused
from host_tools.table.rounds import describe_round
from host_tools.table.targets import open_table


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
                emit(reply)  # the protocol's own JSON lines, one per line
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
        emit(reply["rounds"])
        return 0
    if not reply["rounds"]:
        print("no rounds recorded yet")
    for rec in reply["rounds"]:
        print("journal seq %d" % rec["seq"])
        print("\n".join(describe_round(rec["result"])))
    return 0


def cmd_screenshot(args):
    from host_tools.outfile import check_out
    from host_tools.emu.screenshot import save
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
        emit({k: r[k] for k in fields})
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
    from host_tools.link.protolink import ProtocolLink, restart_loop
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
