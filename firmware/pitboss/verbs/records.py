# The verbs that read the records: recall (the last rounds settled or voided), the
# meters, export (signed records for the host's archive) and its acknowledgement. Long
# answers are iterables read from flash as the main loop writes them
# (pitboss.loop.json_writer), never held whole on a Pico's heap.
import json

from pitboss.compat import const
from pitboss.errors import Refused
from pitboss.store.record import RECALL_MAX, is_settle
from pitboss.protocol import int_arg, one_arg


EXPORT_MAX = 50  # records per export reply
_EXPORT_BYTES = const(4096)  # payload bytes per export reply (one raw-REPL answer)


def recall(ctl, args):
    n = int_arg(args[0], "n") if args else 10
    if not 1 <= n <= RECALL_MAX:
        raise Refused("bad_args", "recall 1..%d rounds" % RECALL_MAX)
    seqs = ctl._settle_seqs
    if seqs is None:  # (only while booting) read back through the journal
        seqs = ctl.journal.last(n, is_settle, seqs=True, tick=ctl.feed)
    else:
        # Kept as they are journalled, so recall reads only the rounds it shows
        # (from the checkpoint before the first), not the segments before them.
        first = ctl.journal.first_seq
        seqs = [q for q in seqs[-n:] if q >= first]
    rows = Rows(ctl.journal, seqs, ctl.feed, raw=ctl.stream)
    # The main loop writes the rounds out one at a time as they are read from flash
    # (pitboss.loop.json_writer): 50 rounds held at once would not fit a Pico's heap.
    return {"rounds": rows if ctl.stream else list(rows)}


def meters(ctl, args):
    return {"totals": ctl.meters.totals(),
            "games": {g: ctl.meters.game(g) for g in ctl.meters.games()}}


def export(ctl, args):
    """export FROM [N]: up to N records from seq FROM, each with its kind, the CRC-32
    it has on flash and an HMAC-SHA256 under the board's key over
    "SEQ KIND CRC " + payload, so the host can prove where each came from."""
    if not 1 <= len(args) <= 2:
        raise Refused("bad_args", "usage: export FROM [N]")
    start = int_arg(args[0], "from")
    n = int_arg(args[1], "n") if len(args) > 1 else EXPORT_MAX
    if start < 1 or not 1 <= n <= EXPORT_MAX:
        raise Refused("bad_args", "export FROM (>= 1) [N (1..%d)]" % EXPORT_MAX)
    mac = ctl.auth.mac()
    if mac is None:
        raise Refused("no_key", "export needs the board's key (provision first)")
    if ctl.journal.state != "open":
        raise Refused("journal_corrupt", "the journal is %s" % ctl.journal.state)
    limit = ctl.export_limit()
    recs = ExportRows(ctl.journal, start, n, limit, mac, ctl.feed, raw=ctl.stream)
    # The main loop writes the records out one at a time as they are read and signed
    # (pitboss.loop.json_writer): a reply of 4 KB of payloads held as records, their
    # text and their MACs at once took ~16 KB of a Pico's heap (issue 11: the lowest
    # free heap of a 200-round Pai Gow session fell under 64 KB at its first export).
    return {"records": recs if ctl.stream else list(recs),
            "first": ctl.journal.first_seq, "last": limit, "acked": ctl.journal.acked}


def export_ack(ctl, args):
    """export-ack SEQ (authenticated): the host has stored every record up to SEQ.
    Their segments may then be deleted when space is needed; journal_full clears."""
    seq = int_arg(one_arg(args, "export-ack SEQ"), "seq")
    if not ctl.journal.acked <= seq <= ctl.export_limit():
        raise Refused("bad_args", "export-ack takes %d..%d, got %d"
                      % (ctl.journal.acked, ctl.export_limit(), seq))
    ctl.journal.acknowledge(seq)
    cleared = []
    if not ctl.journal.full and "journal_full" in [a["code"]
                                                    for a in ctl.tilt.active()]:
        cleared = ctl.tilt.clear("export", "journal_full")
        if cleared:
            ctl.log_event({"ev": "tilt_clear", "codes": cleared, "op": "export"})
        ctl.show()
    return {"acked": seq, "first": ctl.journal.first_seq, "full": ctl.journal.full,
            "cleared": cleared}


def _nothing():
    pass


def _raw_result(payload):
    """(game, round, the result's JSON as a memoryview of payload) of a settle or void
    record whose last value is its result (_record), else None (a record of an earlier
    firmware, in any key order: the caller parses it). The result is the only object at
    the top level, so the payload ends with "}}" exactly when it is last; then every value
    before it is a number, a string (its quotes escaped) or the lines (lists of scalars),
    so the first ',"result":' is the top-level key. Parsing the rest is a few hundred
    bytes: a 2.2 KB Caribbean settlement parsed whole is 6.1 KB of objects on a Pico,
    held while its row is written (issue 11: `recall 50` took a 200-round Pai Gow
    session's lowest free heap to 54,080 B)."""
    n = len(payload)
    if n < 4 or payload[n - 2:] != b"}}":
        return None
    i = payload.find(b',"result":')
    if i < 0:
        return None
    head = json.loads(payload[:i] + b"}")
    return head["game"], head["round"], memoryview(payload)[i + 10:n - 1]


class Rows:
    """recall's rounds, read from the journal one record at a time, oldest first, as
    they are iterated (one pass from the first seq): nothing but the seqs is held."""

    stream_rows = True  # what pitboss.loop.json_writer looks for

    def __init__(self, journal, seqs, feed=None, raw=False):
        self.journal = journal
        self.seqs = seqs
        self.feed = feed or _nothing
        # raw: each result left as its stored JSON (a memoryview), for json_writer to
        # write in small pieces, where the record allows it (_raw_result).
        self.raw = raw

    def __len__(self):
        return len(self.seqs)

    def __iter__(self):
        seqs = self.seqs
        i = 0
        if not seqs:
            return
        for seq, _, payload in self.journal.records(seqs[0]):
            self.feed()
            if seq != seqs[i]:
                continue
            r = _raw_result(payload) if self.raw else None
            if r is not None:
                yield {"seq": seq, "game": r[0], "round": r[1], "result": r[2]}
            else:
                r = json.loads(payload)
                yield {"seq": seq, "game": r["game"], "round": r["round"],
                       "result": r["result"]}
            i += 1
            if i == len(seqs):
                return


class ExportRows:
    """export's records from seq `start`, read, signed and handed out one at a time as
    they are iterated: up to n records, none after `limit`, and no more payload bytes
    than _EXPORT_BYTES (one record at least)."""

    stream_rows = True  # what pitboss.loop.json_writer looks for

    def __init__(self, journal, start, n, limit, mac, feed=None, raw=False):
        self.journal = journal
        self.start = start
        self.n = n
        self.limit = limit
        self.mac = mac
        self.feed = feed or _nothing
        # raw: each payload left as the bytes read, for json_writer to write as a JSON
        # string in small pieces (a Pai Gow settlement is 2.3 KB: no str copy of it).
        self.raw = raw

    def __iter__(self):
        from binascii import hexlify

        k = size = 0
        mac = self.mac
        for seq, kind, payload, crc in self.journal.records_crc(self.start):
            if seq > self.limit or k >= self.n or (k and size + len(payload) > _EXPORT_BYTES):
                return
            self.feed()
            size += len(payload)
            k += 1
            # export_message(), fed to the MAC in two parts: no copy of the payload
            h = mac.start()
            h.update(export_header(seq, kind, crc))
            h.update(payload)
            yield {"seq": seq, "kind": chr(kind), "crc": crc,
                   "mac": hexlify(mac.finish(h)).decode(),
                   "payload": payload if self.raw else payload.decode()}


def export_header(seq, kind, crc):
    """What an exported record's MAC covers before its payload."""
    return ("%d %d %d " % (seq, kind, crc)).encode()


def export_message(seq, kind, crc, payload):
    """What an exported record's MAC covers (the host builds the same bytes)."""
    return export_header(seq, kind, crc) + bytes(payload)
