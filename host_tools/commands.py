"""The `pitboss` command table, in one place (as mpremote's `_COMMANDS`): every command's
name, its handler, its help line and the function that adds its arguments.

A handler is named "module:function" and imported when its command runs, so `pitboss
rank` loads neither the flash nor the floor. A command with subcommands (`board`,
`floor`) names one handler per subcommand. host_tools.cli builds the parser from this
table (and gives every --port its -p, $PITBOSS_PORT and the config file).
"""
import argparse
import importlib
import os
from pathlib import Path

from host_tools.argtypes import operator_id, positive, tilt_code


class Handler:
    """A command's handler, imported on its first call."""

    def __init__(self, spec):
        self.spec = spec
        self._fn = None

    def resolve(self):
        if self._fn is None:
            mod, _, name = self.spec.partition(":")
            self._fn = getattr(importlib.import_module(mod), name)
        return self._fn

    def __call__(self, args):
        return self.resolve()(args)

    def __repr__(self):
        return "<handler %s>" % self.spec


# ---- the arguments of each command -------------------------------------------------------

def _rank(r):
    _game(r)
    r.add_argument("--batch", action="store_true", help="read hands from stdin")
    r.add_argument("--best", action="store_true",
                   help="best hand of the game's size out of more cards")
    r.add_argument("--port", help="rank on a board (a serial device, or 'virtual')")
    r.add_argument("cards", nargs="*", help="cards: As Td 9c Jk ...")


def _game(p):
    """The --game/-g every one-game command takes (rank, census, config, edge)."""
    p.add_argument("--game", "-g", required=True, help="game id (see `pitboss games`)")


def _census(c):
    _game(c)
    c.add_argument("--method", choices=("exhaustive", "core", "grouped"),
                   default="exhaustive",
                   help="exhaustive: rank every hand; core: every hand through the rule "
                   "core alone (slow); grouped: one hand per class")
    c.add_argument("--workers", type=positive, default=None,
                   help="processes (default: cores)")


def _games(g):
    g.add_argument("--json", action="store_true",
                   help="one JSON array: each game's cards, deck, joker, categories, source")


def _ports(p):
    p.add_argument("--json", action="store_true", help="one JSON array")


def _board(board):
    from host_tools.emu.vboard_state import KINDS
    sub = board.add_subparsers(dest="board_cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--kind", choices=KINDS, default="virtual",
                        help="virtual: the WebAssembly VM; pico: an emulated RP2040 running "
                             "the pitboss image (--uf2 for another) (default virtual)")
    common.add_argument("--state-dir", type=Path, default=None,
                        help="where tty/pid/log live (default .pitboss/KIND or "
                             "$PITBOSS_STATE/KIND)")
    common.add_argument("--name", default=None,
                        help="keep several boards: this one's name, for --port board:NAME "
                             "(default: its kind's, board:virtual or board:pico)")
    p = sub.add_parser("start", parents=[common], help="start a board")
    p.add_argument("--flash-dir", default=None,
                   help="host folder holding the board's files, or the Pico's flash.bin "
                        "(default STATE/flash)")
    p.add_argument("--heap", type=int, default=None,
                   help="virtual only: initial GC heap in bytes")
    p.add_argument("--production", action="store_true",
                   help="power on with the service switch released: the firmware's main "
                        "loop owns the port, no REPL (default: switch held, service mode: "
                        "the same loop, and the REPL for flash and provisioning; the table "
                        "commands work in both)")
    p.add_argument("--uf2", default=None,
                   help="pico only: the MicroPython UF2, 'stock' (../shared/firmware/"
                        "RPI_PICO-v1.27.0.uf2), 'pitboss' or 'release' (the pitboss image with "
                        "the firmware frozen into it) (default $PITBOSS_PICO_UF2, then the "
                        "pitboss image, boards/rp2/PITBOSS_PICO/build/)")
    p.add_argument("--gpio", action="append", metavar="PIN=LEVEL",
                   help="pico only: hold an input pin at 0 or 1 from power-on (repeatable)")
    p.add_argument("--flash-ms", nargs=2, type=float, metavar=("ERASE", "PAGE"),
                   default=None,
                   help="pico only: a flash sector erase and a page program take this "
                        "long, interrupts off (default 45 0.7: W25Q16JV typical; 400 3 is "
                        "its worst case)")
    stop = sub.add_parser("stop", parents=[common], help="stop it")
    lg = sub.add_parser("log", parents=[common], help="the last lines of its board.log")
    lg.add_argument("-n", "--lines", type=int, default=40, help="how many (default 40)")
    status = sub.add_parser("status", parents=[common],
                            help="print JSON; exit 3 if not running")
    return {"start": p, "stop": stop, "log": lg, "status": status}


def _flash_choices():
    from host_tools.deploy.mpy_build import board_names
    return ("auto",) + tuple(board_names())


def _flash(f):
    f.add_argument("--port", required=True, help="serial device, or 'virtual'")
    f.add_argument("--board", default="auto", choices=_flash_choices(),
                   help="board definition (default: from the device's sys.platform)")
    f.add_argument("--source", action="store_true", help="copy .py sources, not .mpy")
    f.add_argument("--image", default="auto", choices=("auto", "pitboss", "release"),
                   help="a Pico's MicroPython image: 'pitboss' (the firmware in ROMFS), "
                        "'release' (the firmware frozen into the image; only its manifest "
                        "is deployed), installed first where the Pico runs another "
                        "(default auto: what it runs)")


def _verify(v):
    v.add_argument("--port", required=True, help="serial device")
    v.add_argument("--board", default="auto", choices=_flash_choices(),
                   help="board definition whose build to compare with (default: from the "
                   "device's sys.platform)")
    v.add_argument("--source", action="store_true",
                   help="compare with the source build (default: the mode the board records)")
    v.add_argument("--json", action="store_true",
                   help="one JSON object (ok, problems) instead of the report")


def _vectors(v):
    v.add_argument("--port", help="a serial device, or 'virtual'")


DEFAULT_SHOT = os.path.join("build", "table-screenshot.png")


def _demo(d):
    # The Pico is the board of record (issue 10): every game fits its heap in one session
    # (issue 11; `./dev demo`, measured 2026-12-01 on 2 cores: 54 s and 61 s wall).
    d.add_argument("--board", choices=("pico", "virtual"), default="pico",
                   help="pico: the emulated Raspberry Pi Pico (default); virtual: the "
                        "MicroPython WebAssembly VM")
    d.add_argument("--all-vectors", action="store_true",
                   help="on the Pico, every vector (~100 s more)")
    d.add_argument("--rounds", type=positive, default=None,
                   help="rounds of each game (default 1 on the Pico, 2 on the virtual board)")
    d.add_argument("--seed", type=int, default=2026,
                   help="seed of the dealt rounds: the same seed deals the same cards "
                   "(default %(default)s)")
    d.add_argument("--screenshot", default=DEFAULT_SHOT,
                   help="where the display is saved, a .png (default %(default)s)")


def _board_args(key=False, more=None):
    """The table commands' --port (and, with key, the key store's options), then more."""
    def build(p):
        p.add_argument("--port", required=True,
                       help="a serial device, virtual or pico (a throw-away emulated "
                            "board), board:NAME (a kept one) or auto")
        if key:
            p.add_argument("--board-id", default=os.environ.get("PITBOSS_BOARD"),
                           help="which key in the key store (default: the one the board "
                                "names: uid-<its unique id>, or the key with its "
                                "fingerprint; checked against the board before use)")
            p.add_argument("--keys", help="key store folder (default ~/.pitboss/keys)")
        if more:
            more(p)
    return build


def _json(help=None):
    return lambda p: p.add_argument("--json", action="store_true", help=help)


def _tilt(p):
    p.add_argument("--log", type=int, default=10, metavar="N",
                   help="the last N log entries (default 10; 0: none)")
    p.add_argument("--json", action="store_true", help="one JSON object")


def _table(p):
    p.add_argument("lines", nargs="+", help="one protocol line per argument")


def _shoe(p):
    p.add_argument("--game", "-g",
                   help="the game to deal (default: the one the table plays)")
    p.add_argument("--seats", type=positive,
                   help="seats to deal to (default: the table's, when it plays --game; "
                   "else 3)")
    p.add_argument("--rounds", type=positive, default=1,
                   help="rounds to deal (default %(default)s)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the shuffles: the same seed deals the same cards "
                   "(default %(default)s)")
    p.add_argument("--json", action="store_true",
                   help="each round's settlement as a JSON line instead of text")
    p.add_argument("--reconfigure", action="store_true",
                   help="configure the table for --game and --seats even if it plays "
                   "another game, or already plays them (its house rules and paytables "
                   "back to the game's defaults)")


def _recall(p):
    p.add_argument("n", nargs="?", type=positive, default=10,
                   help="how many of the last rounds (default %(default)s)")
    p.add_argument("--json", action="store_true",
                   help="one JSON array of the rounds (seq, result) instead of the text")


def _export(p):
    p.add_argument("--store", help="folder of the store (BOARD.jsonl; default "
                   "~/.pitboss/export)")
    p.add_argument("--json", action="store_true", help="one JSON object: what was stored")


def _screenshot(p):
    p.add_argument("out", help="the PNG file to write (a .png path)")


def _provision(p):
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--force", action="store_true",
                   help="replace the host's key for --board-id (the old one is kept, "
                        "renamed with a timestamp)")


def _config(p):
    _game(p)
    p.add_argument("--seats", type=int, required=True,
                   help="seats at the table (the game's limits are checked by the board)")
    p.add_argument("--settings", metavar="JSON",
                   help="more configuration: house rules, paytables (a JSON object)")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")


def _void(p):
    p.add_argument("--operator", required=True, type=operator_id,
                   help="who voids it: 1 to 32 letters, digits and _.-@")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")


def _tilt_clear(p):
    p.add_argument("--operator", required=True, type=operator_id,
                   help="who clears it: 1 to 32 letters, digits and _.-@")
    p.add_argument("--code", type=tilt_code, help="clear only this tilt")
    p.add_argument("--json", action="store_true", help="print the board's reply as JSON")


def _bench(b):
    b.add_argument("--port", default=None,
                   help="board for the board figures: 'virtual' (default: the "
                        "MicroPython VM), 'pico' (the emulated Pico: chip time) or a "
                        "serial device (mpremote)")
    b.add_argument("--quick", action="store_true", help="tiny run (harness check)")
    b.add_argument("--json", action="store_true",
                   help="print every figure as one JSON document instead of the report")
    b.add_argument("--save", metavar="FILE.json", help="also write every figure as JSON")
    b.add_argument("--plot", metavar="FILE.png", help="bar chart of pitboss vs peers")
    b.add_argument("--markdown", metavar="FILE", help="the targets table as Markdown")
    b.add_argument("--no-native", action="store_true",
                   help="skip the unix-port native-emitter run")
    b.add_argument("--exact", action="store_true",
                   help="unix port: rank every five-card hand of every five-card game")
    b.add_argument("--journal", action="store_true",
                   help="only the journal on a flash region: erases per round, the "
                        "region's projected life, a card's journal cost (counted on CPython)")
    only = b.add_mutually_exclusive_group()
    only.add_argument("--cpython-only", action="store_true", help="skip the boards")
    only.add_argument("--board-only", action="store_true", help="skip CPython")


def _collect(p):
    p.add_argument("--config", help="the floor's TOML file (tables, db, shifts, http)")
    p.add_argument("--table", action="append", metavar="ID=PORT",
                   help="a table to follow (repeat; over the file's)")
    p.add_argument("--db", help="SQLite file (default floor.sqlite) or postgresql://...")
    p.add_argument("--keys", help="key store folder (default ~/.pitboss/keys)")
    p.add_argument("--http", help="the pit view's HOST:PORT (default 127.0.0.1:8031)")
    p.add_argument("--no-http", action="store_true", help="no pit view")
    p.add_argument("--poll", type=float, help="seconds between a table's rounds of "
                   "status and export (default 0.5)")
    p.add_argument("--shifts", help="shift start hours, UTC (default 6,14,22)")
    p.add_argument("--seconds", type=float, help="stop after this long (default: run "
                   "until SIGTERM or Ctrl-C)")


def _floor_round(p):
    p.add_argument("board_id", metavar="BOARD", help="the table's board id")
    p.add_argument("number", type=int, help="the round's number at that table")


def _floor_csv(p):
    p.add_argument("what", choices=("rounds", "summary"),
                   help="rounds: one line a round; summary: one line a table and shift")
    p.add_argument("--out", help="file (default stdout)")


# `pitboss floor`'s subcommands: name, help, takes a period (--shift/--date/--hours), more
_FLOOR_LEAVES = (
    ("summary", "per table and shift: rounds, drop, paid, hold %%, voids, tilts", True, None),
    ("tables", "every table: game, round, state, last settlement", False, None),
    ("round", "recall a round: cards and settlement", False, _floor_round),
    ("tilts", "tilts raised and cleared, with times and operator", True, None),
    ("anomalies", "records refused, gaps, damaged lines (exit 1 if any)", False, None),
    ("csv", "rounds or the shift summary as CSV", True, _floor_csv),
)


def _floor(f):
    fs = f.add_subparsers(dest="floor_command", required=True)

    def common(p, period=True, json=True):
        p.add_argument("--db", help="SQLite file or postgresql://... (default "
                       "$PITBOSS_FLOOR_DB or floor.sqlite)")
        if json:  # (csv writes CSV only)
            p.add_argument("--json", action="store_true",
                           help="one JSON document instead of text")
        p.add_argument("--shifts", help="shift start hours, UTC (default 6,14,22)")
        p.add_argument("--board", help="one table only")
        if period:
            p.add_argument("--shift", help="current (default), previous, or "
                           "'YYYY-MM-DD HH:MM' (its start)")
            p.add_argument("--date", help="a whole UTC day, YYYY-MM-DD")
            p.add_argument("--hours", type=float, help="the last N hours")

    leaves = {}
    for name, help, period, more in _FLOOR_LEAVES:
        p = leaves[name] = fs.add_parser(name, help=help)
        common(p, period, json=name != "csv")
        if more:
            more(p)
    return leaves


def _edge(e):
    _game(e)
    e.add_argument("--paytable", action="append", metavar="KIND=NAME|JSON",
                   help="a paytable as configured: a published table's name or its "
                   "lines as JSON (repeatable)")
    e.add_argument("--house-way", help="Pai Gow: the house way (default gold-star)")
    e.add_argument("--hands", type=int, help="sampled games: rounds (default Caribbean "
                   "2,000,000, Pai Gow 200,000)")
    e.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    e.add_argument("--json", action="store_true", help="everything as one JSON object")


# ---- the table: name -> (handler, help, arguments), in `pitboss --help`'s order ----------

_T = "host_tools.table."
_BOARD = "host_tools.emu.vboard:"
_FLOOR = "host_tools.floor.cli:"

COMMANDS = {
    "rank": ("host_tools.cli:cmd_rank",
             "rank a hand (or --batch: one hand per stdin line)", _rank),
    "census": ("host_tools.cli:cmd_census",
               "count every hand of the game's deck by category", _census),
    "games": ("host_tools.cli:cmd_games", "list the game ids and their rule text", _games),
    "ports": ("host_tools.cli:cmd_ports", "list what --port can name: kept emulated boards "
              "(board:NAME) and USB serial devices", _ports),
    "board": ({"start": _BOARD + "_cmd_start", "stop": _BOARD + "_cmd_stop",
               "log": _BOARD + "_cmd_log", "status": _BOARD + "_cmd_status"},
              "an emulated board on a pty: the virtual board (MicroPython VM) or the Pico "
              "(rp2040js)", _board),
    "flash": ("host_tools.deploy.flash:cmd_flash",
              "copy the firmware to a board (only what changed)", _flash),
    "verify": ("host_tools.deploy.flash:cmd_verify",
               "check the board's files against the host build (exit 1 on any mismatch)",
               _verify),
    "vectors": ("host_tools.deploy.board_vectors:cmd_vectors",
                "run every rule vector (on a board with --port)", _vectors),
    "demo": ("host_tools.demo:run", "the main job on a throw-away emulated board", _demo),
    "meters": (_T + "readonly:cmd_meters", "the board's lifetime meters, per game",
               _board_args(more=_json("one JSON object"))),
    "tilt": (_T + "readonly:cmd_tilt", "the tilts halting the table, and the tilt log",
             _board_args(more=_tilt)),
    "reset": (_T + "readonly:cmd_reset", "restart the table's loop (a service board left "
              "at its REPL)", _board_args()),
    "table": (_T + "readonly:cmd_table", "send bench-protocol lines to a board",
              _board_args(more=_table)),
    "shoe": (_T + "keyed:cmd_shoe", "deal seeded rounds through the board's shoe input",
             _board_args(key=True, more=_shoe)),
    "recall": (_T + "readonly:cmd_recall", "the last rounds from the board's journal",
               _board_args(more=_recall)),
    "export": (_T + "keyed:cmd_export", "copy the journal records not yet acknowledged to "
               "an append-only store, verified, then acknowledge them",
               _board_args(key=True, more=_export)),
    "screenshot": (_T + "readonly:cmd_screenshot",
                   "save what the table display shows as a PNG",
                   _board_args(more=_screenshot)),
    "provision": (_T + "keyed:cmd_provision", "give a board a new authentication key",
                  _board_args(key=True, more=_provision)),
    "config": (_T + "keyed:cmd_config", "configure the table (authenticated)",
               _board_args(key=True, more=_config)),
    "void": (_T + "keyed:cmd_void", "void the round that lost a card, its wagers "
             "returned (authenticated: the tilt-clear of its misdeal)",
             _board_args(key=True, more=_void)),
    "tilt-clear": (_T + "keyed:cmd_tilt_clear", "clear a tilt (authenticated, logged)",
                   _board_args(key=True, more=_tilt_clear)),
    "bench": ("host_tools.bench.cli:cmd_bench", "evaluator speed and memory vs treys, "
              "eval7, phevaluator (CPython and MicroPython)", _bench),
    "collect": (_FLOOR + "cmd_collect", "follow many tables into one database, serve "
                "the pit view (docs/floor.md)", _collect),
    "floor": ({"summary": _FLOOR + "cmd_summary", "tables": _FLOOR + "cmd_tables",
               "round": _FLOOR + "cmd_round_of_board", "tilts": _FLOOR + "cmd_tilts",
               "anomalies": _FLOOR + "cmd_anomalies", "csv": _FLOOR + "cmd_csv"},
              "the floor's database: summary, tables, round, tilts, anomalies, csv", _floor),
    "edge": ("host_tools.fast.edge:cmd_edge", "exact (or sampled) return and house edge of "
             "every wager of a configured table, beside the published figure", _edge),
}


def add(sub, name, func=None):
    """Add command `name` from the table to an argparse subparsers object; each leaf's
    func(args) -> exit code is its handler (or `func`, a handler already imported)."""
    handler, help, build = COMMANDS[name]
    p = sub.add_parser(name, help=help)
    leaves = build(p)
    if isinstance(handler, dict):
        for leaf, spec in handler.items():
            leaves[leaf].set_defaults(func=Handler(spec))
    else:
        p.set_defaults(func=func or Handler(handler))
    return p


def add_all(sub):
    for name in COMMANDS:
        add(sub, name)
