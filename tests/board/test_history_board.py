"""Issue 12, History and Export, on the virtual board (the firmware on MicroPython 1.27
behind a pty, the real mpremote): the findings that bricked or erased history on the
board, each failing on main before (commit d29ab6c). Damage is done to the board's
flash between power cycles (the flash folder the virtual board loads at power-on)."""
import json
import os
import shutil
import signal
import struct
import time

import pytest

from host_tools.table import export as ex
from host_tools.emu import vboard
from host_tools.emu import vboard_state
from host_tools.table.auth import KeyStore
from host_tools.link.boardlink import Board
from host_tools.cli import main as cli_main
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import play_many
from host_tools.table.targets import BoardTarget

GAME = "pa-three-card-prime"


class Table:
    """A flashed, provisioned virtual board on a flash folder of its own (a copy of the
    module's one flashed folder: flashing once is most of a test's time)."""

    def __init__(self, base, flashed):
        self.base = base
        self.state, self.flash = base / "state", base / "flash"
        shutil.copytree(flashed, self.flash)
        self.keys_dir = str(base / "keys")
        self.keys = KeyStore(self.keys_dir)
        st = vboard.start(self.flash, state_dir=self.state)
        self._connect(st)
        self.conf.provision()
        assert self.conf.configure(GAME, 3)["ok"]

    def _connect(self, st):
        self.pid, self.port = st["pid"], st["port"]
        self.board = Board(st["port"])
        self.t = BoardTarget(self.board)
        self.conf = Configurator(self.t, "hb", self.keys)

    def off(self):
        """Power off (SIGKILL the board): its flash folder is what survives."""
        self.board.close()
        os.killpg(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while vboard_state.alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.02)

    def on(self):
        self._connect(vboard.start(self.flash, state_dir=self.state))

    def cycle(self):
        self.off()
        self.on()

    def close(self):
        self.board.close()
        vboard_state.stop(self.state)

    def cmd(self, *lines):
        return self.t.commands(list(lines))

    def status(self):
        return self.cmd("status")[0]

    def tilts(self):
        return [a["code"] for a in self.status()["tilts"]]

    def recall(self, n=50):
        return [(r["seq"], r["round"]) for r in self.cmd("recall %d" % n)[0]["rounds"]]


@pytest.fixture(scope="module")
def flashed(vb_flash):
    return vb_flash  # (conftest.py: flashed once for the session; Table copies it)


@pytest.fixture
def tb(tmp_path, flashed):
    t = Table(tmp_path, flashed)
    try:
        yield t
    finally:
        t.close()


def newest_copy(base):
    gens = {}
    for p in (str(base) + ".a", str(base) + ".b"):
        if os.path.exists(p):
            with open(p, "rb") as f:
                gens[p] = struct.unpack_from("<I", f.read(8), 4)[0]
    return max(gens, key=gens.get)


def damage(path):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0x55
        f.seek(0)
        f.write(data)


def test_repeated_wagers_do_not_brick_the_board(tb):
    # ~1,045 once made the next snapshot 41 KB and every round command bad_args after,
    # across power cycles. 1,500 fill the 64 KB segment and force a snapshot mid-round.
    replies = []
    lines = ["wager 1 ante=%d" % (1 + i % 900) for i in range(1500)]
    for i in range(0, len(lines), 500):
        replies += tb.cmd(*lines[i:i + 500])
    assert all(r["ok"] for r in replies), [r for r in replies if not r["ok"]][:1]
    [segs] = tb.t.run("print(len(A.app().ctl.journal.segments))")
    assert segs >= 2  # a snapshot was taken with the round open
    tb.cycle()
    assert all(r["ok"] for r in tb.cmd("wager 2 ante=5", "deal"))
    assert tb.status()["phase"] == "dealing"


def test_floods_leave_the_last_50_rounds_and_refusals_change_nothing(tb):
    rounds = play_many(tb.t, GAME, 3, 52, seed=300)
    assert all(r.get("ok") for r in rounds)
    kept = tb.recall()
    assert len(kept) == 50
    before, seq = tb.status(), tb.status()["journal_seq"]
    # A refused wager after the settled round opens nothing; newround with nothing to
    # close changes nothing.
    assert tb.cmd("wager 9 ante=5")[0]["error"]["code"] == "unknown_seat"
    assert tb.status() == before
    for i in range(0, 12000, 500):  # (500 a call: a longer list literal exhausts the
        tb.cmd(*(["newround"] * 500))  # VM's parser stack)
    # The settled round closed once, with the checkpoint written right after it
    # (docs/journal.md, "Checkpoints").
    assert tb.status()["journal_seq"] == seq + 2
    bad = ["auth %d %s config {}" % (9000 + i, "cd" * 32) for i in range(3000)]
    for i in range(0, len(bad), 500):
        tb.cmd(*bad[i:i + 500])
    assert tb.recall() == kept
    assert tb.status()["journal_seq"] <= seq + 2 + 12 + 1  # 12 aggregate records, a tilt
    assert tb.tilts() == ["bad_mac"]
    tb.cycle()
    assert tb.recall() == kept


def test_damaged_newest_copies_keep_the_tilt_and_the_counter(tb):
    tb.cmd("wager 1 ante=5", "deal", "card As", "card As")
    assert tb.conf.signed("tilt-clear op1")["ok"]
    tb.cmd("newround", "wager 1 ante=5", "deal", "card Kd", "card Kd")
    assert tb.tilts() == ["duplicate_card"]
    line = tb.keys.sign("hb", "tilt-clear op2 shoe_fault")  # accepted: counter advances
    assert tb.cmd(line)[0]["ok"]
    tb.off()
    damage(newest_copy(tb.flash / "state" / "tilt"))
    damage(newest_copy(tb.flash / "auth" / "counter"))
    tb.on()
    assert "duplicate_card" in tb.tilts()
    assert tb.cmd(line)[0]["error"]["code"] == "replay"


def test_record_boundary_truncation_tilts_on_the_board(tb):
    tb.cmd("wager 1 ante=5", "wager 2 ante=5", "deal", "card 2c", "card 3d")
    tb.off()
    jdir = tb.flash / "journal"
    seg = jdir / sorted(n for n in os.listdir(jdir) if n.endswith(".jnl"))[-1]
    data = seg.read_bytes()
    off, starts = 16, []
    while off < len(data):
        starts.append(off)
        off += 14 + struct.unpack_from("<H", data, off + 6)[0]
    seg.write_bytes(data[:starts[-2]])
    tb.on()
    st = tb.status()
    assert [a["code"] for a in st["tilts"]] == ["journal_corrupt"]
    assert "truncated" in st["tilts"][0]["detail"]


def test_round_numbers_unique_across_configs_and_a_cut_after_a_snapshot(tb):
    a = play_many(tb.t, GAME, 3, 2, seed=1)
    assert tb.conf.configure(GAME, 2)["ok"]
    b = play_many(tb.t, GAME, 2, 1, seed=2)
    # A rotation whose next record never came: the newest record is the snapshot.
    tb.t.run("A.app().ctl.journal._rotate()")
    tb.cycle()
    assert tb.status()["phase"] == "settled"
    c = play_many(tb.t, GAME, 2, 1, seed=3)
    numbers = [r["round"] for r in a + b + c]
    assert numbers == sorted(set(numbers)), numbers


def test_meters_reset_is_explicit_and_keeps_the_damaged_copies(tb):
    play_many(tb.t, GAME, 3, 2, seed=9)
    tb.off()
    paths = [tb.flash / "state" / ("meters." + s) for s in "ab"]
    paths = [p for p in paths if p.exists()]
    for p in paths:
        damage(p)
    damaged = sorted(p.read_bytes() for p in paths)
    tb.on()
    assert tb.tilts() == ["meters_corrupt"]
    assert tb.conf.signed("tilt-clear op1")["error"]["code"] == "meters_corrupt"
    assert tb.tilts() == ["meters_corrupt"]
    r = tb.conf.signed("meters-reset op1")
    assert r["ok"] and r["cleared"] == ["meters_corrupt"], r
    tb.cycle()
    assert tb.tilts() == []
    kept = sorted((tb.flash / "state" / os.path.basename(k)).read_bytes() for k in r["kept"])
    assert kept == damaged


def test_pitboss_export_resumes_without_gaps_or_duplicates(tb, tmp_path, capsys):
    play_many(tb.t, GAME, 3, 6, seed=20)
    store = str(tmp_path / "store")
    # An export cut off after its first batch (the host died before acknowledging).
    real = tb.t.commands
    calls = []

    def dies(lines):
        calls.append(lines)
        if len(calls) == 2:
            raise OSError("host died")
        return real(lines)
    tb.t.commands = dies
    with pytest.raises(OSError):
        ex.export(tb.t, tb.keys, "hb", store, batch=20)
    tb.t.commands = real
    assert len(ex.read_store(ex.store_path(store, "hb"))) == 20
    play_many(tb.t, GAME, 3, 2, seed=40)
    tb.board.close()  # the CLI opens the port itself
    rc = cli_main(["export", "--json", "--port", tb.port, "--store", store, "--board-id", "hb",
                   "--keys", tb.keys_dir])
    out = capsys.readouterr().out
    assert rc == 0, out
    res = json.loads(out.strip().splitlines()[-1])
    tb.board = Board(tb.port)
    tb.t.board = tb.board
    seqs = [x["seq"] for x in ex.read_store(res["store"])]
    assert seqs == list(range(1, res["last"] + 1)) and res["acked"] == res["last"]
    st = tb.status()
    assert st["journal_seq"] == res["last"] + 1  # only the ack's own auth_ok after it
