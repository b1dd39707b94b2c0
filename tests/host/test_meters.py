"""pitboss.store.meters: per-game meters beside the journal, counted exactly once."""
import json

import pytest

from pitboss import games
from pitboss.store import record as R
from pitboss.store.journal import Journal
from pitboss.store.osfs import OsFS
from pitboss.store.slots import Slots, SlotCorrupt
from pitboss.store.meters import Meters, MetersCorrupt, parse_settlement
from tests.support.powercut_fs import MemFS, PowerCut

MP = "/journal/meters"
GAMES = ("pa-three-card-prime", "qc-caribbean")


def settle(i):
    """Round i's settlement record: deterministic, two games, two or three wager types."""
    game = GAMES[i % 2]
    lines = [["ante", 10 + i, (20 + 2 * i) if i % 3 else 0], ["play", 5, 10 if i % 2 else 0]]
    if i % 4 == 0:
        lines.append(["pair_plus", 1, 5])
    return {"ev": "settle", "game": game, "lines": lines}


def expected(n):
    m = {}
    for i in range(n):
        s = settle(i)
        g = m.setdefault(s["game"], {"rounds": 0, "wagered": 0, "paid": 0, "types": {}})
        g["rounds"] += 1
        for wt, w, p in s["lines"]:
            g["wagered"] += w
            g["paid"] += p
            t = g["types"].setdefault(wt, {"count": 0, "wagered": 0, "paid": 0})
            t["count"] += 1
            t["wagered"] += w
            t["paid"] += p
    return m


def snapshot_of(m):
    return {g: m.game(g) for g in m.games()}


def test_apply_counts_rounds_wagers_and_types_and_persists():
    fs = MemFS()
    m = Meters(MP, fs).load()
    assert m.seq == 0 and m.totals() == {"rounds": 0, "wagered": 0, "paid": 0, "seq": 0}
    for i in range(9):
        s = settle(i)
        assert m.apply(i + 1, s["game"], s["lines"]) is True
    assert snapshot_of(m) == expected(9)
    assert m.game("nj-5card") == {"rounds": 0, "wagered": 0, "paid": 0, "types": {}}
    t = m.totals()
    assert t["rounds"] == 9 and t["seq"] == 9
    assert t["wagered"] == sum(g["wagered"] for g in expected(9).values())
    m2 = Meters(MP, fs).load()  # a power cycle
    assert snapshot_of(m2) == expected(9) and m2.seq == 9


def test_a_settlement_is_never_counted_twice():
    fs = MemFS()
    m = Meters(MP, fs).load()
    s = settle(0)
    assert m.apply(5, s["game"], s["lines"])
    before = {k: bytes(v) for k, v in fs.files.items()}
    assert m.apply(5, s["game"], s["lines"]) is False
    assert m.apply(4, s["game"], s["lines"]) is False
    assert {k: bytes(v) for k, v in fs.files.items()} == before
    assert m.game(s["game"])["rounds"] == 1


@pytest.mark.parametrize("game,lines,exc", [
    ("", [["ante", 1, 0]], ValueError),
    (7, [["ante", 1, 0]], ValueError),
    ("g", [["ante", -1, 0]], ValueError),
    ("g", [["ante", 1.5, 0]], ValueError),
    ("g", [["ante", True, 0]], ValueError),
    ("g", [["ante", 1]], ValueError),
    ("g", [["", 1, 1]], ValueError),
    ("g", ["ante"], ValueError),
])
def test_bad_settlements_are_refused_and_change_nothing(game, lines, exc):
    fs = MemFS()
    m = Meters(MP, fs).load()
    m.apply(1, "g", [["ante", 1, 2]])
    before = {k: bytes(v) for k, v in fs.files.items()}
    with pytest.raises(exc):
        m.apply(2, game, lines)
    with pytest.raises(ValueError):
        m.apply(0, "g", [])
    assert {k: bytes(v) for k, v in fs.files.items()} == before
    assert m.seq == 1 and m.game("g")["wagered"] == 1


def test_failed_save_leaves_ram_unchanged():
    fs = MemFS()
    m = Meters(MP, fs).load()
    m.apply(1, "g", [["ante", 1, 2]])
    real = fs.open
    fs.open = lambda p, mode: (_ for _ in ()).throw(OSError(28, "full")) if "w" in mode \
        else real(p, mode)
    with pytest.raises(OSError):
        m.apply(2, "g", [["ante", 5, 0]])
    fs.open = real
    assert m.seq == 1 and m.game("g")["wagered"] == 1


def test_store_damage():
    fs = MemFS()
    m = Meters(MP, fs).load()
    m.apply(1, "g", [["ante", 1, 2]])
    m.apply(2, "g", [["ante", 3, 0]])
    # The newer copy damaged: the older one is used (a torn save looks the same).
    a = fs.clone()
    a.files[MP + ".a"][-1] ^= 1
    m2 = Meters(MP, a).load()
    assert m2.seq == 1 and m2.game("g")["wagered"] == 1
    # Both damaged: corrupt, never zeros.
    b = fs.clone()
    b.files[MP + ".a"][-1] ^= 1
    b.files[MP + ".b"][20] ^= 1
    with pytest.raises(MetersCorrupt) as e:
        Meters(MP, b).load()
    assert e.value.reason == "store_corrupt"
    # A good CRC around bad contents.
    c = MemFS()
    Slots(MP, c).save('{"v": 1, "seq": "x"')
    with pytest.raises(MetersCorrupt) as e:
        Meters(MP, c).load()
    assert e.value.reason == "bad_data"


def test_power_cut_at_every_step_of_a_save():
    base = MemFS()
    m = Meters(MP, base).load()
    for i in range(3):
        s = settle(i)
        m.apply(i + 1, s["game"], s["lines"])
    k = 0
    while True:
        fs = base.clone()
        fs.cut_after(k)
        m = Meters(MP, fs).load()
        s = settle(3)
        try:
            m.apply(4, s["game"], s["lines"])
            done = True
        except PowerCut:
            done = False
        fs.reboot()
        m = Meters(MP, fs).load()
        assert snapshot_of(m) == expected(4 if m.seq == 4 else 3)
        assert m.seq in (3, 4) and (m.seq == 4 or not done)
        if done:
            break
        k += 1
    assert k > 30


# ---- with the journal ------------------------------------------------------------------
class Controller:
    """The documented call order: journal the settlement, then count it; the snapshot
    callback checkpoints the meters."""

    def __init__(self, fs, rounds_done=0, later=False):
        self.fs = fs
        self.rounds = rounds_done
        # later: the meters counted in RAM at the settlement and saved afterwards, as the
        # firmware's idle pass does (Controller.save_when_idle), here every eighth round:
        # the rounds between are saved by the checkpoints alone before their segments go.
        self.later = later
        self.j = Journal("/journal", snapshot=self.snapshot, fs=fs, segment_size=400,
                         keep=2, max_payload=160)
        self.m = Meters(MP, fs)

    def snapshot(self, seq):
        self.m.checkpoint(seq - 1)
        return json.dumps({"rounds": self.rounds})

    def boot(self):
        self.j.open()
        self.m.load()
        n = self.m.recover(self.j)
        # Rebuild the engine's state from the newest snapshot + records.
        for seq, kind, payload in self.j.replay():
            obj = json.loads(payload)
            if kind == R.KIND_SNAPSHOT:
                self.rounds = obj["rounds"]
            elif obj.get("ev") == "settle":
                self.rounds += 1
        return n

    def play_round(self, i):
        self.j.append(json.dumps({"ev": "card", "round": i}))
        s = settle(i)
        seq = self.j.append(json.dumps(s))
        self.rounds += 1
        self.m.apply(seq, s["game"], s["lines"], not self.later)
        if self.later and i % 8 == 7:
            self.m.flush()


@pytest.mark.parametrize("later", [False, True])
@pytest.mark.parametrize("mode", ["prefix", "cow"])
def test_crash_anywhere_in_a_round_counts_each_settlement_once(mode, later):
    base = MemFS(mode)
    c = Controller(base, later=later)
    c.boot()
    for i in range(6):
        c.play_round(i)
    cuts = 0
    caught_up = 0
    for target in (6, 7):  # the second round rotates the journal
        k = 0
        while True:
            fs = base.clone()
            c = Controller(fs, later=later)
            c.boot()
            for i in range(6, target):
                c.play_round(i)
            fs.cut_after(k)
            try:
                c.play_round(target)
                done = True
            except PowerCut:
                done = False
            fs.reboot()
            c = Controller(fs, later=later)
            caught_up += c.boot()
            # The meters hold exactly the settlements the journal holds.
            assert c.m.totals()["rounds"] == c.rounds
            assert snapshot_of(c.m) == expected(c.rounds)
            assert c.rounds in (target, target + 1) and (c.rounds == target + 1 or not done)
            # And it goes on correctly.
            c.play_round(c.rounds)
            assert snapshot_of(c.m) == expected(c.rounds)
            if done:
                break
            k += 1
        cuts += k
    assert cuts > 100
    assert caught_up > 5  # cuts between "journalled" and "counted" were really hit


def test_many_rounds_with_rotation_then_reboot():
    fs = MemFS()
    c = Controller(fs)
    c.boot()
    for i in range(60):
        c.play_round(i)
    assert len(c.j.segments) == 2 and c.j.first_seq > 50
    c2 = Controller(fs)
    assert c2.boot() == 0
    assert snapshot_of(c2.m) == expected(60) and c2.rounds == 60


def test_meters_and_journal_that_disagree():
    fs = MemFS()
    c = Controller(fs)
    c.boot()
    for i in range(3):
        c.play_round(i)
    # The journal lost (or replaced): meters claim records it does not have.
    lost = fs.clone()
    for p in [p for p in lost.files if p.endswith(".jnl")]:
        del lost.files[p]
    c2 = Controller(lost)
    with pytest.raises(MetersCorrupt) as e:
        c2.boot()
    assert e.value.reason == "ahead_of_journal"
    # Meters far behind what the journal still holds: settlements may be gone.
    behind = fs.clone()
    m = Meters("/journal/other", behind).load()
    j = Journal("/journal", snapshot=lambda s: "{}", fs=behind, segment_size=400, keep=2,
                max_payload=160)
    j.open()
    for i in range(40):
        j.append('{"ev": "card"}')
    with pytest.raises(MetersCorrupt) as e:
        m.recover(j)
    assert e.value.reason == "journal_missing_records"
    # A settlement record the meters cannot count.
    odd = MemFS()
    c3 = Controller(odd)
    c3.boot()
    c3.j.append(json.dumps({"ev": "settle", "game": "g", "lines": [["ante", -5, 0]]}))
    c4 = Controller(odd)
    with pytest.raises(MetersCorrupt) as e:
        c4.boot()
    assert e.value.reason == "bad_settlement"


def test_parse_settlement():
    assert parse_settlement(b'{"ev": "card", "c": "As"}') is None
    assert parse_settlement('{"ev":"settle","game":"g","lines":[["ante",1,2]]}') == \
        ("g", [["ante", 1, 2]])
    assert parse_settlement('{"ev": "config", "note": "\\"settle\\""}') is None


def test_real_directory(tmp_path):
    p = str(tmp_path / "j" / "meters")
    m = Meters(p, OsFS()).load()
    m.apply(3, "g", [["ante", 10, 25]])
    m.checkpoint(9)
    m2 = Meters(p, OsFS()).load()
    assert m2.seq == 9 and m2.game("g")["types"]["ante"] == {"count": 1, "wagered": 10,
                                                             "paid": 25}
    assert sorted(x.name for x in (tmp_path / "j").iterdir()) == ["meters.a", "meters.b"]


TABLE_GAMES = games.ids()  # every table game in the registry


def test_lines_from_the_table_engine_result():
    from pitboss.sim.rounds import simulate_round
    from pitboss.store.meters import lines_from_result
    m = Meters(MP, MemFS()).load()
    seq = 0
    for game in TABLE_GAMES:
        for seed in range(4):
            r = simulate_round(game, 3, seed)
            lines = lines_from_result(r)
            assert lines and all(w >= 0 and p >= 0 for _, w, p in lines)
            # What the players got back less what they staked is what the house lost.
            assert sum(p - w for _, w, p in lines) == -r["house_net"], (game, seed)
            seq += 1
            m.apply(seq, r["game"], [list(l) for l in lines])
    assert m.totals()["rounds"] == 24
    assert m.totals()["paid"] - m.totals()["wagered"] == sum(
        -simulate_round(g, 3, s)["house_net"]
        for g in TABLE_GAMES for s in range(4))
