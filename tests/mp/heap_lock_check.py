# Runs on MicroPython: rank hands of every game with the heap locked. Any allocation in
# the evaluator's hot path raises MemoryError here, and the host test sees it.
import gc
import micropython

from pitboss.rules import evaluator, profiles
from pitboss.rules.cards import parse_hand

HANDS = {
    "nj-5card": ("As Ks Qs Js Ts", "5s 4h 3d 2c Ah", "Kd Kc 7h 7s 2d", "9c 8d 4h 3s 2c",
                 "As Ks Qs Js Ts 9s 2d", "2c 2d 2h 5s 5d 9c 9h"),
    "qc-caribbean": ("Ah Kh Qh Jh 9h", "Td Tc Th Ts 2c"),
    "nj-3card": ("Ah Kh Qh", "As 2d 3c", "Kd Ks Kh", "9c 4c 2c", "Ac Kd 2s Qh"),
    "pa-three-card-prime": ("Ad Kd Qd", "Qs Jd 9c"),
    "pa-all-six": ("As Ks Qs Js Ts 9s", "2c 3c 4c 5c Ac Kd", "2c 2d 5h 7s 9d Kc"),
    "pr-pai-gow": ("Kh Qh 9h 5h Jk", "2h 3h 4h 5h Jk", "As Ad Ac Ah Jk", "Ks Kd Jk 5c 7d",
                   "Jk 2c 3d 4h 5s", "As Ad Kc Kh Jk 7c 7d"),
    "pr-pai-gow-a5-low": ("Jk 2c 3d 4h 5s", "Ah 2h 3h 4h 5h"),
    "pr-pai-gow-low": ("Jk As", "Kd Qc", "7s 7h"),
}


def locked_scores(p, hands, out):
    # Only ints are touched; `out` is preallocated, so nothing here may allocate.
    for i in range(len(hands)):
        out[i] = evaluator.score(p, hands[i]) & 0x3FFFFFFF


def main():
    from array import array
    checked = 0
    for gid in HANDS:
        p = profiles.get(gid)
        hands = [bytes(parse_hand(h)) for h in HANDS[gid]]
        out = array("i", [0] * len(hands))
        want = [evaluator.score(p, h) for h in hands]
        gc.collect()
        micropython.heap_lock()
        try:
            locked_scores(p, hands, out)
        finally:
            micropython.heap_unlock()
        assert list(out) == want, gid
        checked += len(hands)
    print("HEAPLOCK-OK", checked)


main()
