"""Issue 11, the protocol on the serial line, on the virtual board (the MicroPython 1.27
VM behind a pty, flashed with the real mpremote): every host table command is a protocol
line to the running main loop, in production as in service mode; the simulated shoe
deals through the board's side channel into its shoe UART, each frame acknowledged;
the host sets the clock as it connects."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from host_tools.table.auth import KeyStore
from host_tools.link.protolink import PRODUCTION, SERVICE, ProtocolLink, probe
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget, open_table
from host_tools.emu.vboard import virtual_board
from pitboss.rules.cards import name

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GAME, SEATS = "pr-pai-gow", 4


@pytest.fixture(scope="module")
def flashed(tmp_path_factory, vb_flash):
    """Flashed (conftest.py's vb_flash) and provisioned in service mode; the table
    commands go over protocol lines already (provisioning is the raw REPL's, then the
    loop runs again)."""
    base = tmp_path_factory.mktemp("serial")
    keys = KeyStore(base / "keys")
    shutil.copytree(vb_flash, base / "flash")
    with virtual_board(base / "flash", service=True) as st:
        # a flashed board boots into its loop: it answers lines right away, in service mode
        assert probe(st["port"]) == SERVICE
        with open_table(st["port"]) as t:
            assert t.commands(["status"])[0]["ok"]
            Configurator(t, "s1", keys).provision()
            assert t.commands(["version"])[0]["mode"] == "service"
    return base, keys


def reference(plans):
    """The same rounds on the same firmware on CPython: the settle replies."""
    t = LocalTarget(durable=False)
    c = Configurator(t, "ref", KeyStore(os.path.join(t.root, "keys")))
    c.provision()
    assert c.configure(GAME, SEATS)["ok"]
    return [t.round(*plan)[-1] for plan in plans]


def test_a_round_through_the_shoe_settles_the_same_while_the_host_asks(flashed, tmp_path):
    base, keys = flashed
    plans = [plan_round(GAME, SEATS, 40 + i) for i in range(2)]
    flash = tmp_path / "flash"
    shutil.copytree(base / "flash", flash)
    with virtual_board(flash, service=False) as st:
        assert probe(st["port"]) == PRODUCTION
        with open_table(st["port"]) as t:
            assert Configurator(t, "s1", keys).configure(GAME, SEATS)["ok"]
            # Round 1: nothing but the deal.
            quiet = t.round(*plans[0])
            # Round 2: `status` and `recall` between every frame the shoe sends.
            before, frames, after = plans[1]
            assert all(r["ok"] for r in t.commands(before))
            dealt, asked = t.deal_asking(frames, ["status", "recall 3"])
            cards = [int(frames[i + 1:i + 3], 16) for i in range(0, len(frames), 12)]
            busy = t.commands(after)
            recalled = t.commands(["recall 2"])[0]["rounds"]
    assert all(r["ok"] for r in asked) and len(asked) == 2 * len(cards)
    phases = [r["phase"] for r in asked[0::2]]
    assert phases[0] == "dealing" and phases[-1] != "dealing"  # asked while it dealt
    from host_tools.emu.shoe_sim import dealt_check
    # in order, none lost or doubled; the banker's cards are dealt face down (issue 12:
    # their lines name no card until the settlement, which shows them)
    assert dealt_check([c["card"] for c in dealt], [name(c) for c in cards]) == (0, 0, True)
    assert [quiet[-1], busy[-1]] == reference(plans)  # exactly as on CPython, undisturbed
    assert [r["result"]["house_net"] for r in recalled] == [quiet[-1]["house_net"],
                                                            busy[-1]["house_net"]]


def test_the_shoe_deals_to_the_table_as_configured(flashed, tmp_path):
    """`pitboss shoe` with no --game or --seats deals to the table as it stands: the game,
    the seats and the house rules `pitboss config --settings` gave it are kept (a bench
    technician's 6-seat, no-commission table is not turned into a 3-seat table of the
    game's defaults); --seats that differ, or --reconfigure, configure it afresh."""
    base, keys = flashed
    flash = tmp_path / "flash"
    shutil.copytree(base / "flash", flash)  # a board of its own: not configured yet
    env = dict(os.environ, PITBOSS_KEYS=str(keys.folder))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)

    def rounds(n):
        r = cli("recall", "--port", p, "--json", str(n))
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    with virtual_board(flash, service=False) as st:
        p = st["port"]
        r = cli("shoe", "--port", p, "--board-id", "s1")
        assert r.returncode == 2 and "no game yet: give --game" in r.stderr, r  # usage
        r = cli("config", "--port", p, "--board-id", "s1", "--game", "pr-pai-gow",
                "--seats", "6", "--settings", '{"house": {"commission_bps": 0}}')
        assert r.returncode == 0, r.stderr
        r = cli("shoe", "--port", p, "--board-id", "s1", "--rounds", "2")
        assert r.returncode == 0 and r.stdout.count("house net") == 2, r.stderr
        kept = rounds(2)
        seats = [s for x in kept for s in x["result"]["seats"]]
        assert {len(x["result"]["seats"]) for x in kept} == {6}, kept
        assert [s["commission"] for s in seats] == [0] * 12, seats
        with ProtocolLink(p) as link:
            link.ready()
            assert link.request("status")["table_seats"] == 6
        # --reconfigure: the game's defaults again (5% commission on a winning seat)
        r = cli("shoe", "--port", p, "--board-id", "s1", "--rounds", "2", "--reconfigure")
        assert r.returncode == 0, r.stderr
        seats = [s for x in rounds(2) for s in x["result"]["seats"]]
        assert len(seats) == 12 and any(s["commission"] > 0 for s in seats), seats
        # other seats: configured afresh for them
        r = cli("shoe", "--port", p, "--board-id", "s1", "--seats", "2")
        assert r.returncode == 0, r.stderr
        assert len(rounds(1)[0]["result"]["seats"]) == 2
        with ProtocolLink(p) as link:
            link.ready()
            assert link.request("status")["table_seats"] == 2


def test_cli_table_commands_in_production_and_the_clock(flashed, tmp_path):
    base, keys = flashed
    flash = tmp_path / "flash"
    shutil.copytree(base / "flash", flash)  # a board of its own: no rounds played yet
    env = dict(os.environ, PITBOSS_KEYS=str(keys.folder))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)

    with virtual_board(flash, service=False) as st:
        p = st["port"]
        r = cli("config", "--port", p, "--board-id", "s1", "--game", "nj-5card",
                "--seats", "2", "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stderr
        # Issue 29 item 4: human text by default; a refused line exits 1, its reply on
        # stdout and the refusal once on stderr; recall --json is JSON and nothing else.
        r = cli("config", "--port", p, "--board-id", "s1", "--game", "nj-5card",
                "--seats", "2")
        assert r.returncode == 0 and r.stdout == "configured nj-5card, 2 seats\n", r
        r = cli("config", "--port", p, "--board-id", "s1", "--game", "nj-5card",
                "--seats", "99")
        assert r.returncode == 1 and r.stdout == "" and "config refused" in r.stderr, r
        assert len(r.stderr.strip().splitlines()) == 1
        r = cli("table", "--port", p, "status", "no-such-verb")
        assert r.returncode == 1 and len(r.stdout.splitlines()) == 2, r
        assert "1 of 2 lines refused" in r.stderr
        r = cli("recall", "--port", p, "--json", "3")
        assert r.returncode == 0 and json.loads(r.stdout) == [], r  # nothing else on stdout
        r = cli("recall", "--port", p, "3")
        assert r.returncode == 0 and r.stdout == "no rounds recorded yet\n", r
        r = cli("shoe", "--port", p, "--board-id", "s1", "--game", "nj-5card",
                "--seats", "2", "--rounds", "2", "--seed", "5")
        assert r.returncode == 0 and r.stdout.count("house net") == 2, r.stderr
        r = cli("recall", "--port", p, "2", "--json")
        assert r.returncode == 0 and len(json.loads(r.stdout.splitlines()[0])) == 2
        recalled = json.loads(r.stdout.splitlines()[0])
        png = tmp_path / "s.png"
        r = cli("screenshot", "--port", p, str(png))
        assert r.returncode == 0 and png.stat().st_size > 100, r.stderr
        # Issue 29 item 2: meters and tilt are commands of their own, in production too.
        r = cli("meters", "--port", p, "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["totals"]["rounds"] == 2, r.stderr
        r = cli("meters", "--port", p)
        assert r.returncode == 0 and "all games: 2 rounds" in r.stdout, r.stderr
        r = cli("tilt", "--port", p)
        assert r.returncode == 0 and "no tilt" in r.stdout, r.stderr
        assert json.loads(cli("tilt", "--port", p, "--json").stdout)["active"] == []
        r = cli("table", "--port", p, "clock", "tilt")
        assert r.returncode == 0, r.stderr
        clock, tilt = [json.loads(x) for x in r.stdout.splitlines()]
        # every host command set the clock as it connected
        assert clock["set"] is True and abs(clock["time"] - time.time()) < 60
        with ProtocolLink(p) as link:
            link.ready()
            last = link.request("recall 1")["rounds"][0]
        # the newest of the two shoe rounds (round numbers run on for the life of the
        # board, issue 12: configuring takes one too)
        played = sorted(x["result"]["round"] for x in recalled)
        assert played[1] == played[0] + 1 and last["result"]["round"] == played[1]
    # The journal's records carry the host's time.
    recs = []
    for seg in sorted(os.listdir(flash / "journal")):
        data = (flash / "journal" / seg).read_bytes()
        recs += [json.loads(m) for m in _payloads(data)]
    clocks = [x for x in recs if x.get("ev") == "clock"]
    assert clocks and all(abs(x["t"] - time.time()) < 600 for x in clocks)
    after = [x for x in recs if x.get("ev") == "settle"]
    assert after and all(abs(x["t"] - time.time()) < 600 for x in after)


def _payloads(data):
    """JSON objects in a journal segment (docs/journal.md frames them; a scan is enough
    to read the times back)."""
    out, i = [], data.find(b'{"')
    dec = json.JSONDecoder()
    text = data.decode("latin1")
    while 0 <= i < len(text):
        try:
            obj, end = dec.raw_decode(text, i)
            if isinstance(obj, dict) and "ev" in obj:
                out.append(json.dumps(obj))
            i = text.find('{"', end)
        except ValueError:
            i = text.find('{"', i + 1)
    return out


def test_export_over_the_protocol_line_in_production(flashed, tmp_path):
    # Issue 29 item 2: `pitboss export` used the raw REPL, so a production board (no
    # REPL) refused it, yet export is how such a table clears journal_full. It is
    # protocol lines now: records checked (seq, CRC, MAC), stored, then acknowledged.
    base, keys = flashed
    flash = tmp_path / "flash"
    shutil.copytree(base / "flash", flash)
    env = dict(os.environ, PITBOSS_KEYS=str(keys.folder))
    store = tmp_path / "store"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "host_tools", *args], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)

    with virtual_board(flash, service=False) as st:
        p = st["port"]
        assert probe(p) == PRODUCTION
        r = cli("shoe", "--port", p, "--board-id", "s1", "--game", "nj-5card",
                "--seats", "2", "--rounds", "2", "--seed", "5")
        assert r.returncode == 0, r.stderr
        r = cli("export", "--json", "--port", p, "--board-id", "s1", "--store", str(store))
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout.strip().splitlines()[-1])
        with ProtocolLink(p) as link:
            link.ready()
            acked = link.request("status")
    from host_tools.table import export as ex
    recs = ex.read_store(res["store"])
    assert [x["seq"] for x in recs] == list(range(1, res["last"] + 1))
    assert res["acked"] == res["last"] and res["exported"] == res["last"]
    assert sum('"ev":"settle"' in x["payload"] for x in recs) == 2
    assert acked["ok"]
