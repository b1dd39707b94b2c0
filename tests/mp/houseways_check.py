# Run on the MicroPython VM by tests/host/test_houseways.py: the board's own check of house
# ways (pitboss.games.houseways), and the engine setting a hand by each published way.
from pitboss.rules import profiles
from pitboss.rules.cards import parse_hand
from pitboss.errors import Refused
from pitboss.games import houseways, paigow, paigow_way

P = profiles.get("pr-pai-gow")
for name in ("gold-star", "foxwoods", "gold-star-frixo", "gold-star-icb"):  # (_WAYS: a const)
    w = houseways.way(name)
    print(name, len(w) // 16, paigow_way.house_way(P, parse_hand("9s 9d 9c 2h 2d As Kc"), w)[2])
gs = houseways.way("gold-star")
rows = [list(gs[i:i + 16]) for i in range(0, len(gs), 16)]
last = [i for i in range(len(rows)) if rows[i][0] == 11][-1]
rows[last][15] = 0  # no pair: the highest card in front fouls
try:
    houseways.way({"name": "x", "rules": rows})
    print("NOT REFUSED")
except Refused as e:
    assert e.code == "bad_config" and "no_pair" in str(e), str(e)
    print("refused:", e)
    print("HOUSEWAYS-OK")
