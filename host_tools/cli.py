"""`pitboss` command line (also `python -m host_tools`).

Every command that ranks goes through the firmware's own evaluator; bad input is a
one-line message on stderr and exit status 2, never a traceback.
"""
import argparse
import sys

from pitboss.errors import Refused
from pitboss.rules import profiles
from pitboss.verbs.rank import rank_reply

from host_tools import commands
from host_tools.output import EXIT_BAD_INPUT, EXIT_REFUSED, BoardError, emit, say_failed


def rank_json(gid, tokens, best=False):
    """The JSON object `rank` prints for one hand; raises Refused on bad input.
    The board builds its reply with the same firmware function."""
    return rank_reply(gid, tokens, best)


def cmd_rank(args):
    if args.port:
        from host_tools.deploy.board_rank import rank_on_board
        return rank_on_board(args)
    if args.batch:
        if args.cards:
            return say_failed("rank --batch reads hands from stdin; give no cards")
        try:
            profiles.get(args.game)
        except Refused as e:
            return say_failed(str(e))
        refused = 0
        for n, line in enumerate(sys.stdin, 1):
            if not line.strip():
                continue
            try:
                emit(rank_json(args.game, line, args.best))
            except Refused as e:
                emit({"error": str(e), "kind": e.code, "line": n})
                refused += 1
            sys.stdout.flush()
        # Every line is answered; the exit code says whether any was refused (as
        # `pitboss table` does), so a script needs no parsing to know.
        return EXIT_REFUSED if refused else 0
    try:
        emit(rank_json(args.game, args.cards, args.best))
    except Refused as e:
        return say_failed(str(e))
    return 0


def cmd_census(args):
    from host_tools.fast.census import census
    try:
        profiles.get(args.game)
    except Refused as e:
        return say_failed(str(e))
    emit(census(args.game, args.method, args.workers))
    return 0


def cmd_games(args):
    rows = []
    for gid in profiles.GAMES:
        p = profiles.get(gid)
        rows.append({"game": gid, "cards": p.size, "deck": p.deck, "joker": p.joker,
                     "categories": list(p.categories), "source": p.source})
    if args.json:
        emit(rows)
    else:
        for r in rows:
            print("%-20s %d cards  %d-card deck  %s" % (r["game"], r["cards"], r["deck"],
                                                       r["source"]))
    return 0


def cmd_ports(args):
    from host_tools.link import ports
    rows = ports.attached()
    if args.json:
        emit(rows)
    elif not rows:
        print("no board attached (start one: pitboss board start [--kind pico])")
    else:
        for r in rows:
            print("%-28s %-16s %s" % (r["port"], r["name"] or "", r["description"]))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (and exit 2, as argparse has)."""

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, "%s: %s (see %s -h)\n" % (self.prog, message, self.prog))


def _version():
    try:
        from importlib.metadata import version
        return version("pitboss")
    except Exception:  # noqa: BLE001  (a checkout that was never installed)
        return "0.1.0 (checkout)"


def build_parser():
    ap = _Parser(prog="pitboss", description=__doc__.splitlines()[0],
                 epilog="--port (-p) takes a serial device, virtual or pico (a throw-away "
                        "emulated board), board:NAME (a kept one), or auto; commands that "
                        "need a port take $PITBOSS_PORT, then `port` in %s. "
                        "PITBOSS_DEBUG=1 shows a traceback instead of the one-line error."
                        % "~/.config/pitboss/config.toml")
    ap.add_argument("--version", action="version", version="pitboss " + _version())
    loud = ap.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true",
                      help="no progress or waiting messages on stderr (errors still)")
    loud.add_argument("-v", "--verbose", action="store_true",
                      help="a traceback with an error (as PITBOSS_DEBUG=1)")
    sub = ap.add_subparsers(dest="command", required=True)

    commands.add_all(sub)  # the one command table (host_tools.commands)
    _port_options(sub)
    return ap


NEEDS_PORT = set()  # commands whose --port is required: env and config may give it


def _port_options(sub):
    """Every --port also answers to -p; where a command needs one, $PITBOSS_PORT or the
    config file may give it (checked in main(), after parsing)."""
    for name, p in sub.choices.items():
        for action in p._actions:
            if "--port" not in action.option_strings:
                continue
            if "-p" not in p._option_string_actions:
                action.option_strings.insert(0, "-p")
                p._option_string_actions["-p"] = action
            if action.required:
                action.required = False
                NEEDS_PORT.add(name)
                action.help = (action.help or "") + " (default $PITBOSS_PORT, or port " \
                    "in the config file)"


def main(argv=None):
    args = build_parser().parse_args(argv)
    import os

    from host_tools import settings
    if args.verbose:
        os.environ["PITBOSS_DEBUG"] = "1"
    if args.quiet:
        os.environ["PITBOSS_QUIET"] = "1"
    try:
        conf = settings.load()
    except settings.SettingsError as e:
        return say_failed(str(e))
    if args.command in NEEDS_PORT or getattr(args, "board_id", "-") is None:
        settings.apply(args, conf)
    if args.command in NEEDS_PORT and not args.port:
        return say_failed("%s needs a port: --port/-p PORT, $PITBOSS_PORT, or port in %s "
                          "(`pitboss ports` lists them)" % (args.command, settings.path()))
    from host_tools.emu.vm.runner import VMError
    from host_tools.fast import hostfast
    hostfast.install()  # the host's score()/best(): the firmware core's scores, looked up
    try:
        if getattr(args, "port", None):
            from host_tools.link import ports
            args.port = ports.resolve(args.port)  # board:NAME, auto (host_tools.link.ports)
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except (VMError, BoardError) as e:
        # Node, npm or the VM package missing, or a board that will not start: the message
        # says what to install or do; a traceback would hide it.
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        return say_failed(lines[0] if lines else type(e).__name__, command=args.command)
    except Exception as e:  # noqa: BLE001
        # Every error is one line and exit 2, never a traceback; PITBOSS_DEBUG=1 shows it.
        import os

        if os.environ.get("PITBOSS_DEBUG"):
            raise
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        return say_failed("%s%s" % (type(e).__name__, ": " + lines[0] if lines else ""))
