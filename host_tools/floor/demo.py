"""The demo's last step (`./dev demo`): the floor's collector follows the demo's board
until the database holds every record the board exported, then the floor summary is
printed, as `pitboss floor summary` prints it."""
import asyncio
import os
import tempfile
import time

from host_tools.floor import queries as q
from host_tools.floor.collector import Collector
from host_tools.floor.config import Config, Table
from host_tools.floor.store import Store


def collect_and_summarise(port, keys, say, seconds=90.0, board="demo"):
    db = os.path.join(tempfile.mkdtemp(prefix="pitboss-floor-"), "floor.sqlite")
    say("== the floor: `pitboss collect` follows the board into %s" % db)
    conf = Config([Table(board, port)], db=db, keys=keys, http="", poll=0.3)
    c = Collector(conf)
    t0 = time.monotonic()
    asyncio.run(c.run(seconds, until=lambda: all(p.caught_up for p in c.pullers)))
    p = c.pullers[0]
    st = Store(db)
    try:
        rows = q.summary(st, 0, time.time() + 60, conf.shifts)
        n = st.db.query("SELECT count(*) FROM records")[0][0]
        acked = st.db.query("SELECT acked FROM boards")[0][0]
    finally:
        st.close()
    say("   %d records verified (CRC, HMAC) and stored in %.1f s, acknowledged up to seq %d"
        % (n, time.monotonic() - t0, acked))
    say("== the floor summary (pitboss floor summary --db %s --hours 24)" % db)
    tot = q.totals(rows)
    say("   %-17s %-6s %6s %7s %7s %7s %5s %5s" % ("shift", "table", "rounds", "drop",
                                                   "paid", "hold %", "voids", "tilts"))
    for r in rows + [dict(tot, shift="total", board="")]:
        say("   %-17s %-6s %6d %7d %7d %7s %5d %5d" % (
            r["shift"], r["board"], r["rounds"], r["drop"], r["paid"],
            "-" if r["hold"] is None else "%.2f" % r["hold"], r["voids"], r["tilts"]))
    say("   (the pit view of a kept board: pitboss board start, pitboss collect --table "
        "ID=PORT, then open http://127.0.0.1:8031/; README.md, \"The floor\")")
    return 0 if p.caught_up and tot["rounds"] else 1
