"""No shoe byte lost to a flash write, on the emulated Pico (issue 11; docs/shoe-protocol.md).

Stock MicroPython on the emulated RP2040 (host_tools/emu/pico/), where a flash erase or page
program takes the flash chip's time with interrupts off (flash.mjs: 45 ms per 4 KB sector
and 0.7 ms per page by default, W25Q16JV typical; `--erase-ms 400 --page-ms 3` is its
worst case): bytes the shoe sends meanwhile fill UART1's 32-byte RX FIFO and the rest are
lost (uart.mjs counts them). The shoe is a device on UART1 in the emulator, on the
emulated clock (uart.mjs AckingShoe): one frame at a time, resent every `timeout` ms
until the firmware acknowledges it. The host sends each round's lines over the protocol
port to the running loop, hands the round's frames to the shoe, and checks every card
line the loop reports (src=shoe) and every settlement against the same round on CPython.

    python -m host_tools.proofs.pico_link --cards 10000 --erase-ms 400 --page-ms 3

Prints one JSON object: cards and rounds, bytes dropped, frames sent and resent, cards
lost and doubled (both must be 0), settlements equal to CPython's, flash sectors erased
and pages programmed, emulated chip time (clock and executed cycles) and wall time.
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from host_tools.emu.shoe_sim import dealt_check, frame_list, shuffled_deck
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget, open_table


def _say(t0, msg, quiet):
    if not quiet:
        sys.stderr.write("[%7.1f s] %s\n" % (time.monotonic() - t0, msg))
        sys.stderr.flush()


EXPORT_EVERY = 20  # rounds between exports (the journal keeps what is not exported)


def deal_rounds(t, ctl, cards, game, seats, seed=1, timeout_ms=100, t0=None, quiet=True,
                export=None):
    """Rounds through the emulated shoe on a configured table `t` (a ProtoTarget) until
    `cards` cards are dealt. Returns the counts; stops at the first round that lost,
    doubled or settled differently from CPython. export(): called every EXPORT_EVERY
    rounds, as a host does, since the journal keeps every record until it is exported
    and acknowledged (issue 12) and a full journal halts the table (journal_full)."""
    from pitboss.rules import profiles
    from pitboss.rules.cards import name

    t0 = t0 or time.monotonic()
    ref = LocalTarget(durable=False)
    rc = Configurator(ref, "ref", KeyStore(tempfile.mkdtemp(prefix="pitboss-link-ref-")))
    rc.provision()
    assert rc.configure(game, seats)["ok"]
    deck_size = profiles.get(game).deck
    shoe0 = ctl("shoe_state", id=1)
    flash0 = ctl("flash")
    c0 = ctl.cycles()
    dealt = rounds = lost = doubled = same = 0
    failed = None
    seq = t._seq
    while dealt < cards:
        plan = plan_round(game, seats, seed + rounds)
        before, frames, after = plan
        n = len(frames) // 12
        deck = shuffled_deck(seed + rounds, deck_size)[:n]
        replies = t.commands(before)
        fl = frame_list(deck, seq)
        seq = (seq + n) & 0xFFFF
        ctl("shoe", id=1, hex=b"".join(fl).hex(), timeout_ms=timeout_ms, wait=True)
        got = t.link.wait_events(n, timeout=120, strict=False)
        replies += got + t.commands(after)
        cards_in = [r.get("card") for r in got if r.get("ok")]
        want = [name(c) for c in deck]
        lo, do, in_order = dealt_check(cards_in, want)
        lost += lo
        doubled += do
        rounds += 1
        dealt += len(cards_in)
        # The same settlement as CPython's, but for the round number (a board that
        # played before numbers on from its own rounds).
        settled = dict(replies[-1], round=None)
        want_settle = dict(ref.round(*plan)[-1], round=None)
        equal = settled == want_settle
        same += equal
        bad = [r for r in replies if not r.get("ok")]
        if bad or not in_order or not equal:
            failed = {"round": rounds, "error": bad[0].get("error") if bad else None,
                      "sent": len(want), "received": len(cards_in), "equal_cpython": equal}
            break
        if rounds % EXPORT_EVERY == 0:
            if export is not None:
                export()
            # The CPython reference keeps its journal too: acknowledged as if exported,
            # or it tilts journal_full after ~108 rounds of six-seat Five Card Stud and
            # stops settling (its retention is the board's: 10 x 64 KB until exported).
            rj = ref.app.ctl
            rj.journal.acknowledge(rj.export_limit())
        if rounds % 10 == 0:
            st = ctl("shoe_state", id=1)
            _say(t0, "%d rounds, %d cards, %d bytes dropped, %d resends, chip %.1f s"
                 % (rounds, dealt, st["dropped"] - shoe0["dropped"],
                    st["sends"] - shoe0["sends"] - (st["frames"] - shoe0["frames"]),
                    (st["ns"] - c0["ns"]) / 1e9), quiet)
    t._seq = seq
    st = ctl("shoe_state", id=1)
    fl1 = ctl("flash")
    c1 = ctl.cycles()
    frames_acked = st["frames"] - shoe0["frames"]
    sends = st["sends"] - shoe0["sends"]
    return {"cards": dealt, "rounds": rounds, "game": game, "seats": seats,
            "bytes_dropped": st["dropped"] - shoe0["dropped"],
            "frames_sent": sends, "frames_acknowledged": frames_acked,
            "resends": sends - frames_acked, "timeout_ms": timeout_ms,
            "lost": lost, "doubled": doubled, "settled_as_cpython": same,
            "first_failure": failed,
            "sectors_erased": fl1["sectors_erased"] - flash0["sectors_erased"],
            "pages_programmed": fl1["pages_programmed"] - flash0["pages_programmed"],
            "flash_busy_s": round((fl1["busy_ns"] - flash0["busy_ns"]) / 1e9, 2),
            "erase_ms": fl1["erase_ns"] / 1e6, "page_ms": fl1["page_ns"] / 1e6,
            "chip_s": round((c1["ns"] - c0["ns"]) / 1e9, 2),
            "chip_cycles": c1["cycles"] - c0["cycles"]}


def run(cards=10000, game="nj-5card", seats=6, seed=1, erase_ms=45.0, page_ms=0.7,
        timeout_ms=100, quiet=False, flash_dir=None):
    """A fresh emulated Pico (service mode to flash and provision, then its loop),
    flashed from this tree, dealing `cards` cards through UART1."""
    from host_tools.deploy import flash as flashing
    from host_tools.emu.pico import control_for
    from host_tools.emu.vboard import pico_board

    t0 = time.monotonic()
    keys = KeyStore(tempfile.mkdtemp(prefix="pitboss-link-keys-"))
    with pico_board(flash_dir, flash_ms=(erase_ms, page_ms)) as st:
        port = st["port"]
        ctl = control_for(port)
        flashing.flash(port, progress=None)
        _say(t0, "flashed", quiet)
        # The key over the raw REPL in service mode (mpremote with the Pico's timeout),
        # then a soft reset: the loop runs again (host_tools.proofs.serial_proof).
        # First the loop must answer: while the board boots, Ctrl-C is off (main.py) and
        # would only become part of a refused line.
        from host_tools.link.protolink import ProtocolLink
        from host_tools.proofs.serial_proof import provision
        with ProtocolLink(port) as link:
            link.ready(900)
        provision(port, keys, "link")
        with open_table(port) as t:
            conf = Configurator(t, "link", keys)
            r = conf.configure(game, seats)
            if not r.get("ok"):
                raise RuntimeError("configuration refused: %s" % r)
            _say(t0, "provisioned and configured %s, %d seats" % (game, seats), quiet)
            from host_tools.table.export import export
            store = tempfile.mkdtemp(prefix="pitboss-link-export-")
            out = deal_rounds(t, ctl, cards, game, seats, seed, timeout_ms, t0, quiet,
                              export=lambda: export(t, keys, "link", store))
            out["tilts"] = t.commands(["status"])[0].get("tilts")
    out["wall_s"] = round(time.monotonic() - t0, 1)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.proofs.pico_link", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cards", type=int, default=10000)
    ap.add_argument("--game", default="nj-5card")
    ap.add_argument("--seats", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--erase-ms", type=float, default=45.0,
                    help="a 4 KB sector erase, interrupts off (45 typical, 400 worst)")
    ap.add_argument("--page-ms", type=float, default=0.7,
                    help="a 256-byte page program (0.7; 3 worst)")
    ap.add_argument("--timeout-ms", type=float, default=100.0,
                    help="the shoe resends a frame not acknowledged within this")
    ap.add_argument("--flash-dir", type=Path, default=None)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    print(json.dumps(run(a.cards, a.game, a.seats, a.seed, a.erase_ms, a.page_ms,
                         a.timeout_ms, a.quiet, a.flash_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
