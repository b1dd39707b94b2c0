"""Issue 11's proof on any emulated board with a side channel (the virtual board, or the
emulated Pico: `pitboss board start --kind pico --gpio 22=0`, flashed): seeded rounds
dealt through the shoe's UART while the host sends `status` and `recall` between every
frame settle exactly as the same rounds on CPython, and as rounds dealt without them.

    python -m host_tools.proofs.serial_proof --port .pitboss/pico/tty [--game G] [--seats N]

The board must be flashed and running its loop (service or production mode). In service
mode it is provisioned first over the raw REPL (then soft-reset, so the loop runs again).
Prints one JSON object: both rounds' settlement equal to CPython's, how many protocol
lines went in between the frames, acknowledgements resent, and the wall time.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time

from host_tools.link.protolink import SERVICE, ProtocolLink, restart_loop
from host_tools.table.auth import KeyStore
from pitboss.rules.cards import name
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget, ProtoTarget


def provision(port, keys, board_id, timeout=900):
    """A key over the raw REPL (service mode), without building the table there."""
    key = keys.provision(board_id, force=True)
    code = ("from binascii import unhexlify\nfrom pitboss.store import auth\n"
            "auth.provision(unhexlify(%r))\nprint('PROVISIONED')\n" % key.hex())
    p = subprocess.run([sys.executable, "-m", "mpremote", "connect", port, "exec", code],
                       capture_output=True, text=True, timeout=timeout)
    if "PROVISIONED" not in p.stdout:
        raise RuntimeError("provisioning failed: %s %s" % (p.stdout[-500:], p.stderr[-500:]))
    restart_loop(port, timeout=120)


def _say(t0, msg):
    sys.stderr.write("[%6.1f s] %s\n" % (time.monotonic() - t0, msg))
    sys.stderr.flush()


def run(port, game="pr-pai-gow", seats=4, seed=40, ready_timeout=900):
    t0 = time.monotonic()
    keys = KeyStore(tempfile.mkdtemp(prefix="pitboss-proof-keys-"))
    with ProtocolLink(port) as link:
        mode = link.ready(ready_timeout).get("mode")
    _say(t0, "loop answers, %s mode" % mode)
    if mode == SERVICE:
        provision(port, keys, "proof")
        _say(t0, "provisioned over the raw REPL, soft-reset")
    t = ProtoTarget(port)
    try:
        t.link.ready(ready_timeout)
        t.commands(["clock %d" % int(time.time())])
        conf = Configurator(t, "proof", keys)
        _say(t0, "loop answers again; clock set")
        r = conf.configure(game, seats)
        if not r.get("ok"):
            raise RuntimeError("configuration refused: %s" % r)
        _say(t0, "configured %s, %d seats" % (game, seats))
        plans = [plan_round(game, seats, seed + i) for i in range(2)]
        quiet = t.round(*plans[0])
        _say(t0, "round 1 settled (no lines between frames)")
        before, frames, after = plans[1]
        t.commands(before)
        dealt, asked = t.deal_asking(frames, ["status", "recall 3"])
        shoe = t.shoe()
        cards = [int(frames[i + 1:i + 3], 16) for i in range(0, len(frames), 12)]
        _say(t0, "%d frames acknowledged, status and recall answered after each"
             % len(dealt))
        busy = t.commands(after)
        mem = t.commands(["version"])[0]
        refused = [r for r in quiet + dealt + busy if not r.get("ok")]
    finally:
        t.close()
    ref = LocalTarget(durable=False)
    rc = Configurator(ref, "ref", KeyStore(tempfile.mkdtemp(prefix="pitboss-proof-ref-")))
    rc.provision()
    rc.configure(game, seats)
    want = [ref.round(*pl)[-1] for pl in plans]
    return {"port": port, "mode": mode, "game": game, "seats": seats,
            "rounds_equal_cpython": [quiet[-1] == want[0], busy[-1] == want[1]],
            "cards_in_order": [c["card"] for c in dealt] == [name(c) for c in cards],
            "lines_between_frames": len(asked),
            "all_answered_ok": all(r.get("ok") for r in asked) and not refused,
            "refused": refused[:3],
            "phases_seen": sorted({r.get("phase", "?") for r in asked[0::2]}),
            "frames_sent": shoe.sends, "frames_acknowledged": shoe.frames,
            "implementation": mem.get("implementation"),
            "wall_s": round(time.monotonic() - t0, 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.proofs.serial_proof",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", required=True)
    ap.add_argument("--game", default="pr-pai-gow")
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--seed", type=int, default=40)
    a = ap.parse_args(argv)
    print(json.dumps(run(a.port, a.game, a.seats, a.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
