"""Issue 29 item 13: the virtual board keeps the shoe's timers as the board of record
does. Its main loop used to run only when input arrived (a line on the serial port, or
bytes into the shoe's UART), so a torn last frame that the shoe never resends raised no
misdeal: the 1 s resend window (docs/shoe-protocol.md, "Transport errors and misdeals")
was never checked. The emulated Pico tilts shoe_bad_frame for the same bytes."""
import shutil
import time

from host_tools.emu import shoe_sim
from host_tools.table.auth import KeyStore
from host_tools.emu.sidechannel import control_for
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import open_table
from host_tools.emu.vboard import virtual_board
from pitboss.rules import profiles
from pitboss.hw import serialshoe

GAME, SEATS, SEED = "pa-three-card-prime", 3, 42


def _tilt_on_flash(flash):
    """The tilt as the board wrote it to its flash (the bridge writes flash back after
    every pass): seen without sending the board a byte."""
    return any(b"shoe_bad_frame" in p.read_bytes()
               for p in (flash / "state").glob("tilt*") if p.is_file())


def test_a_torn_last_frame_never_resent_tilts_with_no_input(tmp_path, vb_flash):
    flash = tmp_path / "flash"
    shutil.copytree(vb_flash, flash)
    keys = KeyStore(tmp_path / "keys")
    with virtual_board(flash, service=True) as st:
        with open_table(st["port"]) as t:
            conf = Configurator(t, "v1", keys)
            conf.provision()
            assert conf.configure(GAME, SEATS)["ok"]
            before, _, after = plan_round(GAME, SEATS, SEED)
            replies = t.commands(before)
            n = len(replies[-1]["order"])
            deck = shoe_sim.shuffled_deck(SEED, profiles.get(GAME).deck)[:n]
            ctl = control_for(st["port"])
            # Every frame but the last intact; the last torn (its CRC fails), and the
            # shoe sends nothing more: no resend, no input of any kind from here.
            ctl.shoe(shoe_sim.frames(deck, faults=[(n - 1, "corrupt")]))
            assert not _tilt_on_flash(flash)
            deadline = time.monotonic() + 10 * serialshoe.RESEND_MS / 1000
            while not _tilt_on_flash(flash) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _tilt_on_flash(flash), "no shoe_bad_frame tilt without input"
            tilts = t.commands(["status"])[0]["tilts"]
            assert [a["code"] for a in tilts] == ["shoe_bad_frame"]
            assert t.commands(["status"])[0]["dealt"] == n - 1
