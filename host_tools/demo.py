"""`pitboss demo`: the main job on an emulated board, no hardware needed.

Starts a throw-away board -- by default the emulated Raspberry Pi Pico (the pitboss image,
MicroPython 1.27 with the firmware in ROMFS, on rp2040js; PITBOSS_PICO_UF2=stock for the
stock image; `--board virtual`: the WebAssembly VM) -- behind a serial port,
flashes the firmware with mpremote (one ROMFS deploy on the pitboss image), checks the board's firmware hashes, runs rule vectors
on the board (every one on the virtual board; on the Pico one game's unless --all-vectors,
since all 569 take ~100 s there), ranks a sample hand of every game there, then provisions
its key, configures each game with an authenticated command and plays seeded rounds
through the shoe (on the Pico: frames on UART1's wire at 9600 baud), printing each round's
hands and settlement, and saves a screenshot of the table display (on the Pico: the
emulated SSD1306's RAM, i.e. what the driver's I2C traffic drew).
"""
import os
import tempfile
import time

from host_tools.commands import DEFAULT_SHOT
from host_tools.deploy import flash as flashing, verify
from host_tools.deploy.board_rank import rank_lines
from host_tools.deploy.board_vectors import board_run, compare, cpython_run
from host_tools.emu.screenshot import save, text as screen_text
from host_tools.emu.vboard import virtual_board
from host_tools.link.boardlink import Board
from host_tools.output import say_failed
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import describe_round, play_rounds
from host_tools.table.targets import open_table
from pitboss.verbs.rank import rank_reply

SAMPLES = (
    ("nj-5card", "Ah Kh Qh Jh Th"), ("nj-5card", "5s 4h 3d 2c Ah"),
    ("nj-3card", "As Ks Qs"), ("qc-caribbean", "Ad Kc 9h 4s 2d"),
    ("pa-three-card-prime", "Qd Kd Ad"), ("pa-all-six", "9c Tc Jc Qc Kc Ac"),
    ("pr-pai-gow", "Kh Qh 9h 5h Jk"), ("pr-pai-gow", "Ah 2h 3h 4h 5h"),
    ("pr-pai-gow-a5-low", "Ah 2h 3h 4h 5h"), ("pr-pai-gow-low", "Jk As"),
)


def say(msg=""):
    print(msg, flush=True)


# The Pico's demo vectors when not --all-vectors: one game's file (its every rule).
PICO_VECTOR_GAMES = ("nj-5card",)




def run(args):
    from host_tools.outfile import check_out
    if args.screenshot == DEFAULT_SHOT:
        os.makedirs("build", exist_ok=True)  # the default's own folder, in this one
    why = check_out(args.screenshot, {".png"})
    if why:  # before minutes of emulation, and no folder made for a path given
        return say_failed("--screenshot %s" % why, command="demo")
    t0 = time.monotonic()
    kind = getattr(args, "board", "pico")
    if getattr(args, "rounds", None) is None:
        args.rounds = 1 if kind == "pico" else 2   # the Pico's two-minute budget
    if kind == "pico":
        from host_tools.emu.pico import find_firmware
        say("== starting an emulated Raspberry Pi Pico (%s, MicroPython 1.27 on rp2040js, "
            "USB serial on a pty)" % find_firmware()[0].name)
    else:
        say("== starting a virtual board (MicroPython 1.27 WebAssembly VM behind a pty)")
    # Service mode (the logic-door switch held): flashing, the vectors and provisioning use
    # the raw REPL; the table commands are protocol lines to the running loop, as in
    # production, and the shoe deals through the board's side channel.
    with virtual_board(kind=kind, service=True) as st:
        port = st["port"]
        say("   port %s" % port)
        say("== flashing firmware/ with mpy-cross + mpremote (the pitboss image: one "
            "ROMFS; a stock image: the files)")
        flashing.flash(port, progress=lambda m: say("   " + m))
        if not verify.verify(port, progress=lambda m: say("   " + m)).ok:
            return 1
        b = Board(port)
        try:
            say("   board says: %s" % b.exec(
                "import sys, board\nprint(sys.implementation.name, "
                "'.'.join(map(str, sys.implementation.version[:3])), board.NAME)").strip())
            only = None
            if kind == "pico" and not getattr(args, "all_vectors", False):
                only = PICO_VECTOR_GAMES
                say("== the rule vectors of %s, on the board (all of them: --all-vectors, "
                    "or `pitboss vectors --port pico`)" % ", ".join(only))
            else:
                say("== every rule vector, on the board")
            tally, fails = board_run(b, games=only)
            for game in sorted(tally):
                say("   %-20s %4d passed %d failed" % (game, *tally[game]))
            problems = compare(cpython_run(games=only), (tally, fails))
            for p in problems:
                say("   " + p)
            say("== ranking on the board (same JSON as `pitboss rank` on CPython)")
            same = True
            for game, hand in SAMPLES:
                r = rank_lines(b, game, [hand])[0]
                same &= dict(rank_reply(game, hand), ok=True) == r
                say("   %-20s %-18s %-16s %s" % (game, hand, r["category"], " ".join(r["hand"])))
        finally:
            b.close()  # a soft reset: the table's loop runs again
        extra = _table_demo(port, args)
    say("== done in %.1f s: %s" % (time.monotonic() - t0,
                                   "all vectors pass on the board" if not problems and same
                                   else "PROBLEMS above"))
    return 0 if not problems and same and extra == 0 else 1


# The screenshots the demo keeps (the --screenshot path without its extension, then this)
SCREENSHOTS = {"pr-pai-gow": "%s.png", "pa-three-card-prime": "%s-three-card-prime.png"}
GAMES = (("pr-pai-gow", 4), ("pa-three-card-prime", 4), ("qc-caribbean", 4),
         ("nj-5card", 5), ("nj-3card", 6), ("pr-pai-gow-a5-low", 3))


def _table_demo(port, args):
    """Rounds of every game dealt through the simulated shoe and settled on the board,
    then the floor's collector on the board's line until it holds every record."""
    keys = tempfile.mkdtemp(prefix="pitboss-keys-")
    with open_table(port) as target:
        bad = _table_rounds(target, args, keys)
    if bad:
        return bad
    from host_tools.floor.demo import collect_and_summarise
    return collect_and_summarise(port, keys, say)


def _table_rounds(target, args, keys):
    conf = Configurator(target, "demo", KeyStore(keys))
    say("== provisioning the board's key (HMAC-SHA256), fingerprint %s" % conf.provision())
    for game, seats in GAMES:
        r = conf.configure(game, seats)
        if not r.get("ok"):
            say("   configuration refused: %s" % r["error"])
            return 1
        say("== %s, %d seats: authenticated config, %d round(s) through the shoe"
            % (game, seats, args.rounds))
        for res in play_rounds(target, game, seats, args.rounds, seed=args.seed):
            for line in describe_round(res):
                say("   " + line)
        # What the dealer's display shows after the round (issue 30: what to pay), read
        # back from the display's own RAM; after Pai Gow and Three Card Prime also saved.
        frame = target.screen()
        say("   the dealer's display:")
        for line in screen_text(frame):
            say("   | %-16s |" % line)
        path = SCREENSHOTS.get(game)
        if path:
            path = path % os.path.splitext(args.screenshot)[0]
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            save(path, frame)
            say("   saved as %s" % path)
    meters = target.commands(["meters"])[0]["totals"]
    say("== meters: %d rounds, %d wagered, %d paid back (journal seq %d)"
        % (meters["rounds"], meters["wagered"], meters["paid"], meters["seq"]))
    return 0
