"""One table followed over its protocol line: its live state (`status`), and every
journal record not yet acknowledged (`export`), verified, stored, and only then
acknowledged (`auth N MAC export-ack SEQ`), so the board never deletes a record the
database does not hold. Off the line (unplugged, powered off, the board's loop silent) it
is shown offline and tried again with exponential backoff.

Where it starts after a restart is the database's last seq for the table, not anything
kept in memory: a collector killed at any point (before its commit, between its commit
and the acknowledgement, after it) asks again from there. Records sent twice are stored
once (host_tools.floor.store); the acknowledgement is never ahead of the commit.
"""
import asyncio
import logging
import time

from host_tools.floor import link as linkmod
from host_tools.floor.backends import DatabaseError
from host_tools.floor.records import Refusal, verify
from host_tools.link import ports
from host_tools.output import BoardError
from host_tools.table import keyid
from host_tools.table.auth import KeyStoreError, fingerprint

log = logging.getLogger("pitboss.floor")
BATCH = 50  # records asked for per export (the board's EXPORT_MAX)

class Puller:
    def __init__(self, table, db, keys, poll=0.5, backoff_max=30.0, timeout=30.0,
                 opener=None, notify=None, set_clock=True):
        """`db(fn, *args)` runs a Store method on the collector's database thread
        (awaitable); `keys` a host_tools.table.auth.KeyStore; `opener(port)` an awaitable
        giving an open line (default: a serial port, host_tools.floor.link)."""
        self.table = table
        self.board = table.id
        self.db = db
        self.keys = keys
        self.poll = poll
        self.backoff_max = backoff_max
        self.timeout = timeout
        self.opener = opener or _open_serial
        self.notify = notify or (lambda: None)
        self.set_clock = set_clock
        self.online = False
        self.caught_up = False  # the last export found nothing more to store
        self.stats = {"records": 0, "acks": 0, "connects": 0, "refused": 0}
        self._stop = asyncio.Event()

    def stop(self):
        self._stop.set()

    async def run(self):
        backoff = 1.0
        registered = False
        while not self._stop.is_set():
            line = None
            try:
                if not registered:
                    await self.db("register", self.board, self.table.port)
                    registered = True
                line = await self.opener(self.table.port)
                await line.sync(self.timeout)
                self.stats["connects"] += 1
                if self.set_clock:
                    # The records' times are the board's clock: set it as every host
                    # table command does when it connects (journalled by the board).
                    await line.request("clock %d" % int(time.time()), self.timeout)
                await self._check_key(line)
                backoff = 1.0
                while not self._stop.is_set():
                    await self.cycle(line)
                    try:
                        await asyncio.wait_for(self._stop.wait(), self.poll)
                    except asyncio.TimeoutError:
                        pass
            except linkmod.GarbledReply as e:
                # Bytes lost on the line: reported, nothing stored from that reply; the
                # line is opened and synced again.
                try:
                    await self.db("anomaly", self.board, "garbled", None, None, str(e))
                except DatabaseError:
                    pass
                await self._offline(str(e), quiet=True)
            except (linkmod.LinkError, OSError, KeyStoreError, ValueError,
                    DatabaseError) as e:
                # Off the line, or no key for it in the key store (provision it): shown
                # on the table's row, tried again after the backoff.
                await self._offline(str(e))
                try:
                    await asyncio.wait_for(self._stop.wait(), backoff)
                except asyncio.TimeoutError:
                    pass
                backoff = min(backoff * 2, self.backoff_max)
            finally:
                if line is not None:
                    line.close()
        await self._offline("collector stopped", quiet=True)

    async def _check_key(self, line):
        """The store's key for this table's ID is the board's own, asked of the board as
        every keyed command does (host_tools.table.keyid): else the table is offline with
        a line naming the key that is the board's (--table NAME=PORT), or saying that none
        is. Records checked under another board's key would all be refused as forged."""
        r = await line.request("version", self.timeout)
        if "key_fingerprint" not in r:
            return  # firmware from before the board said its fingerprint
        theirs = r["key_fingerprint"]
        if self.keys.key_path(self.board).exists():
            mine = fingerprint(self.keys.load_key(self.board))  # a bad file says so
            why = "the key for %s (fingerprint %s) is not this board's" % (self.board, mine)
        else:
            mine, why = None, "no key for %s in %s" % (self.board, self.keys.folder)
        if mine == theirs:
            return
        found = keyid.keys_with(self.keys, theirs)
        if theirs is None:
            hint = "the board has no key yet: pitboss provision --board-id %s" % self.board
        elif found:
            hint = "the board's key (fingerprint %s) is %s: --table %s=%s" % (
                theirs, found[0], found[0], self.table.port)
        else:
            hint = ("no key there has the board's fingerprint %s: the store that "
                    "provisioned it is another (--keys)" % theirs)
        raise KeyStoreError("%s; %s" % (why, hint))

    async def _offline(self, why, quiet=False):
        was = self.online
        self.online = False
        try:
            await self.db("set_state", self.board, online=0, last_error=why[:300])
        except DatabaseError:
            pass  # the database is what failed: said in the log
        if was or not quiet:
            log.info("%s offline: %s", self.board, why)
        self.notify()

    async def cycle(self, line):
        """One round of following: the live state, then every record not yet stored."""
        st = await line.request("status", self.timeout)
        now = time.time()
        state = {"online": 1, "last_seen": now, "last_error": None}
        if st.get("ok", True) and "phase" in st:
            tilts = ",".join(a.get("code", "?") for a in st.get("tilts") or ())
            state.update(phase=st.get("phase"), round=st.get("round"),
                         tilts=tilts or None)
            if st.get("game"):
                state["game"] = st["game"]
        elif not st.get("ok", True):
            state["last_error"] = "status: %s" % st.get("error", {}).get("message")
        self.online = True
        await self.db("set_state", self.board, **state)
        self.notify()
        await self.pull(line)

    async def pull(self, line):
        """Export from the database's last seq + 1 until the board has nothing more (or a
        record is refused: then nothing after it is stored or acknowledged)."""
        key = self.keys.load_key(self.board)
        while True:
            last = await self.db("last_seq", self.board)
            reply = await line.request("export %d %d" % (last + 1, BATCH), self.timeout)
            if not reply.get("ok", True) or not isinstance(reply.get("records"), list):
                err = reply.get("error", {})
                await self.db("anomaly", self.board, "refused", last + 1, None,
                              "export refused: %s" % err.get("message", reply))
                return
            recs = reply["records"]
            if not recs:
                self.caught_up = True
                return
            self.caught_up = False
            good, gap, problem = await self._check(recs, key, last)
            new = 0
            if good or gap:
                new = await self.db("ingest", self.board, good, gap)
                self.stats["records"] += new
            if problem is not None:
                self.stats["refused"] += 1
                log.warning("%s: %s", self.board, problem)
                await self.db("anomaly", self.board, problem.kind, problem.seq, None,
                              problem.detail)
            if reply.get("truncated") and problem is None:
                problem = reply["truncated"]
                await self.db("anomaly", self.board, "truncated",
                              (good[-1].seq + 1) if good else last + 1, None,
                              "the board's reply was cut short: %s" % reply["truncated"])
            if any(r.event is None or r.event.get("ev") != "auth_ok" for r in good):
                # Only now, with the records committed, may the board let them go. Not
                # for a batch of nothing but acknowledgements' own auth_ok records: each
                # ack journals one, and acking that would journal the next, forever (a
                # flash write per poll on an idle table). They go with the next real one.
                await self.acknowledge(line, good[-1].seq, reply.get("acked", 0))
            if new or gap:
                self.notify()
            if problem is not None or not good:
                return

    async def _check(self, recs, key, last):
        """(records to store, gap or None, the first refusal or None)."""
        good = []
        gap = None
        want = last + 1
        for i, rec in enumerate(recs):
            seq = rec.get("seq") if isinstance(rec, dict) else None
            if i == 0 and isinstance(seq, int) and seq > want:
                # Records no longer on the board (a quarantine set them aside): flagged,
                # never papered over; what follows is stored.
                gap = (want, seq - 1, "records %d..%d are not on the board (first kept: "
                       "%s)" % (want, seq - 1, seq))
                want = seq
            if isinstance(seq, int) and seq < want:
                # The collector asks from after the database's last seq, so a board never
                # sends one it holds: a record behind the one asked for is a replay on
                # the line, refused (identical to the stored one or not) and reported.
                old = await self.db("stored_record", self.board, seq)
                same = old is not None and isinstance(rec, dict) and \
                    list(old) == [rec.get("kind"), rec.get("crc"), rec.get("mac"),
                                  rec.get("payload")]
                return good, gap, Refusal("replayed", seq, "seq %d sent where %d was due "
                                          "(%s)" % (seq, want, "a copy of the stored record"
                                                    if same else "not the stored record"))
            try:
                good.append(verify(rec, key, want))
            except Refusal as e:
                return good, gap, e
            want += 1
        return good, gap, None

    async def acknowledge(self, line, seq, board_acked):
        if seq <= (board_acked or 0):
            return
        for attempt in range(3):
            r = await line.request(self.keys.sign(self.board, "export-ack %d" % seq),
                                   self.timeout)
            if r.get("ok"):
                self.stats["acks"] += 1
                await self.db("set_acked", self.board, r.get("acked", seq))
                return
            code = r.get("error", {}).get("code")
            if code != "replay":
                await self.db("anomaly", self.board, "refused", seq, None,
                              "export-ack refused: %s" % r.get("error", {}).get("message"))
                return
            # Another host signed for this board with a newer counter (an operator's
            # tilt-clear): the key store's counter has moved on; sign again.
        await self.db("anomaly", self.board, "refused", seq, None,
                      "export-ack refused three times as a replay")


async def _open_serial(port):
    # A kept emulated board (board:NAME, host_tools.link.ports) is looked up at each
    # opening: one started after the collector, or started again, is found by its name.
    if port.startswith(ports.PREFIX):
        try:
            port = ports.resolve(port)
        except BoardError as e:
            raise linkmod.LinkError(str(e)) from None
    return await linkmod.SerialLine(port).open()
