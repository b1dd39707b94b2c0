"""Heap allocated by the settle line of a six-seat Pai Gow table (house way) on the
MicroPython 1.27 VM, with the collector off so every byte counts: issue 27's settlement
budget is chip time, and on a Pico most of it was collections, one per 8 KB allocated
(docs/bench.md). Before the work on it the line allocated 28.7-29.4 KB here, the hands as
played (evaluator.played, now pitboss.rules.asplayed) 11.5 KB of it. The figures are printed (pytest -s)."""
import json

from host_tools.emu.vm import run_script

_SCRIPT = r'''
import gc, os
from pitboss.controller import Controller
from pitboss.store.region import FlashRegion
import pitboss.games.paigow as PG


#RAMFLASH#


try:
    os.mkdir("/sa")
except OSError:
    pass
ctl = Controller("/sa", clock=lambda: 1000, rng=lambda n: 0,
                 region=FlashRegion(RamFlash(12)), segment_sectors=4)
ctl.boot()
ctl.apply({"ev": "config", "cfg": {"game": "pr-pai-gow", "seats": 6}})
played = []
real = PG.as_played


def counted(*a):
    a0 = gc.mem_alloc()
    out = real(*a)
    played.append(gc.mem_alloc() - a0)
    return out


PG.as_played = counted
cards = list(range(53))
for r in range(3):
    for s in range(1, 7):
        assert ctl.command("wager %d wager=10" % s)["ok"]
    assert ctl.command("deal 7")["ok"]
    k = (r * 7) % 53
    deck = cards[k:] + cards[:k]
    for i in range(49):
        assert ctl.shoe_card(deck[i], r * 100 + i + 1).get("ok")
    for s in range(1, 7):
        assert ctl.command("houseway %d" % s)["ok"]
    del played[:]
    gc.collect()
    gc.disable()
    a0 = gc.mem_alloc()
    rep = ctl.command("settle")
    a1 = gc.mem_alloc()
    gc.enable()
    assert rep["ok"], rep
    print("SETTLE", r, a1 - a0, len(played), max(played), sum(played))
'''


def test_the_settle_line_of_a_six_seat_pai_gow_table_allocates_under_14_kb(tmp_path):
    import os
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = run_script(_SCRIPT.replace("#RAMFLASH#", _ram_flash(here)),
                   mounts={os.path.join(here, "firmware"): "/"}, timeout=300)
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("SETTLE ")]
    assert len(rows) == 3, r.stdout + r.stderr
    got = [{"line": int(x[2]), "hands": int(x[3]), "max_hand": int(x[4]),
            "hands_total": int(x[5])} for x in rows]
    print(json.dumps(got))
    for g in got:
        assert g["hands"] == 14  # six seats and the banker, high and low
        # The whole line: its result, the journal's record, the meters (was 28.7-29.4 KB).
        assert g["line"] <= 14 * 1024, g
        # A hand as played allocates its list, and a joker's name where it stands for a
        # card ("Jk=A"), only: the cards' names are the seat's (was ~820 B a hand: a
        # sorted pool, closures, rank lists and new name strings).
        assert g["max_hand"] <= 96, g
        assert g["hands_total"] <= 1024, g


def _ram_flash(here):
    """The bench's RAM model of a raw flash region (host_tools/bench/bench_card.py's
    RamFlash), its source: one model for the card's figures and the settlement's."""
    import os
    src = open(os.path.join(here, "host_tools", "bench", "bench_card.py")).read()
    start = src.index("class RamFlash:")
    return src[start:src.index("\n\n\n", start)]
