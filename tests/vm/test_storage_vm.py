"""journal, meters, tilt and auth on MicroPython 1.27 (the WebAssembly VM; its filesystem
is in memory, which is all these tests need) give the same results as on CPython."""
import hashlib
import hmac
import json
import os
import subprocess
import sys

import pytest

from host_tools.table import auth as H
from host_tools.emu.vm import run_script

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(REPO, "firmware")
SCENARIO = os.path.join(REPO, "tests", "mp", "storage_scenario.py")
KEY = bytes(range(1, 33))
SENTINEL = "STORAGE-SCENARIO-OK"


def _lines():
    ok = H.auth_line(KEY, 7, "config game nj-5card")  # signed with CPython's hmac
    forged = "auth 8 %s config game nj-5card" % ("0" * 64)
    return [ok, forged]


@pytest.fixture(scope="module")
def cpython_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("board")
    p = subprocess.run([sys.executable, SCENARIO, str(root)] + _lines(),
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=FIRMWARE))
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.fixture(scope="module")
def vm_run():
    r = run_script(SCENARIO, mounts={FIRMWARE: "/"}, args=["/data"] + _lines(), timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _parse(out):
    lines = out.splitlines()
    assert lines[-1] == SENTINEL
    return {tag: json.loads(rest) for tag, _, rest in (l.partition(" ") for l in lines[:-1])}


def test_same_results_on_micropython_and_cpython(cpython_run, vm_run):
    assert vm_run == cpython_run
    r = _parse(vm_run)
    assert r["state"] == 25 and r["state-after-torn"] == 25
    assert dict(r["torn"])["torn"] == 7 and r["size-restored"] is True
    assert r["corrupt"][0] == "bad_record"
    assert r["quarantine"] == 100 and r["append-after"] == 101
    assert r["meters-recovered"] == 1 and r["meters-recover-again"] == 0
    assert dict(r["meters-totals"]) == {"rounds": 3, "wagered": 110, "paid": 20, "seq": 102}
    assert r["tilt-after-power-cycle"][0] is True and r["tilt-log"][0] is False
    assert r["rfc4231-1"] == hmac.new(b"\x0b" * 20, b"Hi There", hashlib.sha256).hexdigest()
    assert r["auth-ok"] == [True, "ok", "config game nj-5card"]
    assert r["auth-replay"][:2] == [False, "replay"]
    assert r["auth-forged"][:2] == [False, "bad_mac"]
    assert r["auth-counter-after-power-cycle"] == [7, [False, "replay"]]


TORN_SWEEP = r"""
import os
from pitboss.store.journal import Journal
from pitboss.store.osfs import OsFS

class T:
    n = 0
def snap(seq):
    return "snap %d" % T.n
D = "/j"
j = Journal(D, snapshot=snap, segment_size=300, keep=2, max_payload=40)
j.open()
for i in range(7):
    j.append("ev %d" % i)
    T.n += 1
seg = D + "/%08d.jnl" % j.segments[-1][0]
f = open(seg, "rb"); before = f.read(); f.close()
j.append("ev 7")
f = open(seg, "rb"); after = f.read(); f.close()
rec = after[len(before):]
ok = 0
for cut in range(len(rec)):
    f = open(seg, "wb"); f.write(before + rec[:cut]); f.close()
    j2 = Journal(D, snapshot=snap, segment_size=300, keep=2, max_payload=40)
    rep = j2.open()
    f = open(seg, "rb"); now = f.read(); f.close()
    last = [p for s, k, p in j2.last(1)]
    if rep["torn"] == cut and now == before and last == [b"ev 6"]:
        ok += 1
    j2.append("ev 7")
    if [p for s, k, p in j2.last(1)] != [b"ev 7"]:
        ok -= 1000
print("TORN-SWEEP", len(rec), ok)
"""


def test_torn_append_at_every_offset_on_micropython():
    r = run_script(TORN_SWEEP, mounts={FIRMWARE: "/"}, timeout=120)
    assert r.returncode == 0, r.stderr
    tag, n, ok = r.stdout.split()
    assert tag == "TORN-SWEEP" and int(n) == 14 + 4 and ok == n


HMAC_KEYS = [b"", b"k", bytes(range(63)), bytes(range(64)), bytes(range(65)),
             b"\xaa" * 131, bytes(range(200))]


def test_hmac_on_micropython_matches_cpython_hmac():
    src = ("from binascii import hexlify\nfrom pitboss.store.auth import hmac_sha256\n"
           "for n in %r:\n"
           "    k = bytes([(i * 7 + 3) & 255 for i in range(n)])\n"
           "    print(hexlify(hmac_sha256(k, b'config game ' + bytes([65 + n %% 26]) * n))"
           ".decode())\n" % ([len(k) for k in HMAC_KEYS],))
    r = run_script(src, mounts={FIRMWARE: "/"}, timeout=60)
    assert r.returncode == 0, r.stderr
    want = []
    for key in HMAC_KEYS:
        n = len(key)
        k = bytes([(i * 7 + 3) & 255 for i in range(n)])
        want.append(hmac.new(k, b"config game " + bytes([65 + n % 26]) * n,
                             hashlib.sha256).hexdigest())
    assert r.stdout.split() == want


def test_host_provisioning_script_runs_on_the_board():
    key = b"\x42" * 32
    line = H.auth_line(key, 3, "rules ante 10")
    src = (H.board_script(key)
           + "from pitboss.store.auth import Auth\n"
           + "a = Auth().load()\n"
           + "print('VERIFY', a.fault, a.check_line(%r))\n" % line
           + "import os\nprint('FILES', sorted(os.listdir('/auth')))\n")
    r = run_script(src, mounts={FIRMWARE: "/"}, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "PITBOSS-AUTH provisioned %s" % H.fingerprint(key)
    assert out[1] == "VERIFY None (True, 'ok', 'rules ante 10')"
    assert out[2] == "FILES ['counter.b', 'key.a', 'key.b']"
