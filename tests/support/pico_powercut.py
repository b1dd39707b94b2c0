"""Power cuts inside flash writes on the emulated Pico: the emulator is stopped part way
through an erase or program of the flash chip (host_tools/emu/pico/flash.mjs), restarted from
the flash file exactly as written so far, and the round goes on. Used by
tests/support/pico_tier.py; tests/pico/test_pico_board.py asserts on what it returns."""
import tempfile

from host_tools.table.auth import KeyStore
from host_tools.output import BoardError
from host_tools.link.protolink import ProtocolLink
from host_tools.emu.shoe_sim import shuffled_deck
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget
from pitboss.rules.profiles import get


def round_lines(game, seats, seed):
    """A round as bench-protocol lines, the cards by `card` (the shoe path is tested
    elsewhere): everything before `settle`, then `settle`."""
    before, frames, after = plan_round(game, seats, seed)
    n = len(frames) // 12
    cards = ["card %d" % c for c in shuffled_deck(seed, get(game).deck)[:n]]
    return before + cards + after[:-1], after[-1]


def run_cuts(pico):
    from tests.support.pico_tier import CUT_GAME, CUT_SEATS, CUTS
    pico.connect()
    gpio = pico.board.exec("from machine import Pin\n"
                           "print(Pin(14, Pin.IN, Pin.PULL_UP).value(),"
                           " Pin(15, Pin.IN, Pin.PULL_UP).value())").split()
    pico.conf.provision()
    assert pico.conf.configure(CUT_GAME, CUT_SEATS)["ok"]
    ref = LocalTarget(durable=False)
    rc = Configurator(ref, "ref", KeyStore(tempfile.mkdtemp()))
    rc.provision()
    assert rc.configure(CUT_GAME, CUT_SEATS)["ok"]
    results = []
    for i, (ops, keep) in enumerate(CUTS):
        lines, settle = round_lines(CUT_GAME, CUT_SEATS, 300 + i)
        want = ref.commands(lines + [settle])[-1]
        t = pico.target
        rounds_before = t.commands(["meters"])[0]["totals"]["rounds"]
        pre = t.commands(lines)
        assert all(r["ok"] for r in pre), pre
        status_before = t.commands(["status"])[0]
        flash0 = pico.ctl("flash")
        pico.ctl("cut", flash_ops=ops, keep=keep)
        try:
            lost = t.commands([settle])   # the power goes mid-write: no reply
        except (BoardError, OSError) as e:   # the pty closes with the board
            lost = str(e)
        pico.close()
        pico.wait_off()
        pico.up()
        # The boot replays the journal before its loop answers and turns Ctrl-C on: wait
        # for the loop, so mpremote's Ctrl-C lands in it, not in the boot (under CI's
        # load, 2026-12-02, a Ctrl-C lost in the boot left Board() misreading the mode).
        with ProtocolLink(pico.port) as link:
            link.ready(300)
        pico.connect()
        t = pico.target
        after_cut = t.commands(["meters", "status"])
        counted = after_cut[0]["totals"]["rounds"] - rounds_before
        if counted == 0:   # the settlement did not reach the journal: settle again
            again = t.commands([settle])[0]
        else:              # it did: the journal has it, the board must not settle twice
            again = t.commands(["recall 1"])[0]["rounds"][0]["result"]
            assert t.commands([settle])[0]["ok"] is False
        final = t.commands(["meters", "recall %d" % (i + 1)])
        results.append({"cut": (ops, keep), "lost_reply": lost, "counted_at_boot": counted,
                        "status_before": status_before, "status_after": after_cut[1],
                        "settled": again, "want": want, "flash_ops_before": flash0["ops"],
                        "rounds": final[0]["totals"]["rounds"] - rounds_before,
                        "recalled_seqs": [r["seq"] for r in final[1]["rounds"]]})
    return {"gpio": gpio, "cuts": results}
