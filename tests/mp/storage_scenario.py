# The storage modules (journal, meters, tilt, auth) through one scenario on the real
# filesystem, on CPython and on MicroPython alike (tests/vm/test_storage_vm.py runs it on
# both and compares every line).
#   usage: storage_scenario.py ROOT AUTH_LINE_OK AUTH_LINE_FORGED
# Prints "TAG <json>" lines (lists only: dict order is not the same on both ports) and
# STORAGE-SCENARIO-OK last.
import json
import struct
import sys
from binascii import hexlify

from pitboss.store import auth as A
from pitboss.store import record as R
from pitboss.store.journal import Journal
from pitboss.store.record import JournalCorrupt
from pitboss.store.osfs import OsFS
from pitboss.store.meters import Meters
from pitboss.store.tilt import Tilt

ROOT = sys.argv[1]
LINE_OK = sys.argv[2]
LINE_FORGED = sys.argv[3]
JD = ROOT + "/journal"
fs = OsFS()


def plain(x):
    if isinstance(x, dict):
        return [[k, plain(x[k])] for k in sorted(x)]
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).decode()
    return x


def emit(tag, value):
    print(tag, json.dumps(plain(value)))


class Table:
    def __init__(self):
        self.n = 0

    def snapshot(self, seq):
        return "snap %d" % self.n


def journal(table):
    return Journal(JD, snapshot=table.snapshot, fs=fs, segment_size=300, keep=3,
                   max_payload=100)


def rebuild(j):
    state = -1
    for seq, kind, payload in j.replay():
        if kind == R.KIND_SNAPSHOT:
            state = int(payload.split()[1])
        else:
            state += 1
    return state


# 1. appends with rotation
t = Table()
j = journal(t)
emit("open-empty", j.open())
for i in range(25):
    j.append("ev %d" % i)
    t.n += 1
emit("segments", j.segments)
emit("files", sorted(fs.listdir(JD)))

# 2. a power cycle: reopen and replay
t2 = Table()
j = journal(t2)
emit("reopen", j.open())
emit("state", rebuild(j))
emit("last4", j.last(4))
emit("from", [r[0] for r in j.records(j.next_seq - 3)])
emit("evens", j.last(3, lambda k, p: k == R.KIND_RECORD and int(p.split()[1]) % 2 == 0))

# 3. a torn append at the tail: cut back
newest = JD + "/%08d.jnl" % j.segments[-1][0]
size = fs.size(newest)
f = open(newest, "ab")
f.write(struct.pack("<BBI", 0xA5, R.KIND_RECORD, j.next_seq) + b"\x05")
f.close()
j = journal(t2)
emit("torn", j.open())
emit("size-restored", fs.size(newest) == size)
emit("state-after-torn", rebuild(j))

# 4. damage in the middle: corrupt, then quarantine
oldest = JD + "/%08d.jnl" % j.segments[0][0]
f = open(oldest, "rb")
data = bytearray(f.read())
f.close()
data[40] ^= 0x10
f = open(oldest, "wb")
f.write(data)
f.close()
j = journal(t2)
try:
    j.open()
    emit("corrupt", "not detected")
except JournalCorrupt as e:
    emit("corrupt", [e.reason, j.high_seq])
t2.n = 0
emit("quarantine", j.quarantine(min_seq=100))
emit("append-after", j.append("ev 0"))
emit("files-after", sorted(fs.listdir(JD)))

# 5. meters
m = Meters(JD + "/meters", fs).load()
m.apply(3, "pa-three-card-prime", [["ante", 10, 20], ["pair_plus", 5, 0]])
m.apply(4, "qc-caribbean", [["ante", 25, 0], ["call", 50, 0]])
emit("meters-replay", m.apply(4, "qc-caribbean", [["ante", 25, 0]]))
seq = j.append(json.dumps({"ev": "settle", "game": "pa-three-card-prime",
                           "lines": [["ante", 10, 0], ["play", 10, 0]]}))
m.checkpoint(j.first_seq - 1)
m = Meters(JD + "/meters", fs).load()
emit("meters-recovered", m.recover(j))
emit("meters", [[g, m.game(g)] for g in m.games()])
emit("meters-totals", m.totals())
emit("meters-recover-again", Meters(JD + "/meters", fs).load().recover(j))

# 6. tilts, with a clock that ticks by 5
clock = [1000]


def tick():
    clock[0] += 5
    return clock[0]


tl = Tilt(ROOT + "/state/tilt", fs, tick).load()
emit("tilt-raise", tl.raise_tilt("duplicate_card", "Ah in seat 2 and 4", jseq=seq))
tl.raise_tilt("unknown_rfid_tag", "04a1b2c3d4")
tl = Tilt(ROOT + "/state/tilt", fs, tick).load()
emit("tilt-after-power-cycle", [tl.tilted, tl.active()])
emit("tilt-clear", tl.clear("op-17"))
tl = Tilt(ROOT + "/state/tilt", fs, tick).load()
emit("tilt-log", [tl.tilted, tl.log()])

# 7. auth: HMAC vectors, provisioning, verify, replay, forgery
emit("rfc4231-1", hexlify(A.hmac_sha256(b"\x0b" * 20, b"Hi There")))
emit("rfc4231-6", hexlify(A.hmac_sha256(
    b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First")))
A.provision(bytes(range(1, 33)), ROOT + "/auth", fs)
au = A.Auth(ROOT + "/auth", fs).load()
emit("auth-ok", au.check_line(LINE_OK))
emit("auth-replay", au.check_line(LINE_OK))
emit("auth-forged", au.check_line(LINE_FORGED))
au = A.Auth(ROOT + "/auth", fs).load()
emit("auth-counter-after-power-cycle", [au.counter, au.check_line(LINE_OK)[:2]])
print("STORAGE-SCENARIO-OK")
