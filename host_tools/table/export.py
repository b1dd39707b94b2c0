"""`pitboss export`: copy every journal record the board has not had acknowledged into an
append-only store on the host, then acknowledge it (docs/journal.md, "Export").

Each record arrives with its seq, kind, the CRC-32 it has on flash and an HMAC-SHA256
under the board's key over "SEQ KIND CRC " + payload (pitboss.verbs.records.export_message).
The host rebuilds the record's framing from the payload and checks the CRC, checks the
MAC with its copy of the key and that the seqs run on without a gap, appends one JSON line
per record to the store (flushed and fsynced), and only then sends the authenticated
`export-ack SEQ`. The board deletes nothing it has not had acknowledged.

Interrupted anywhere, the next run resumes without a gap or a duplicate: the store's
highest verified record says where to start (a torn last line, a write cut short, is cut
off first; a line that does not verify is reported in "damaged", never trusted),
and the board still has everything after its last acknowledgement. An acknowledgement
that was sent but whose reply was lost changes nothing: the store already holds those
records, and the next run asks from after them.
"""
import hmac
import hashlib
import json
import os
import struct

from pitboss.store.record import HDR, OVERHEAD, frame

from host_tools.table.configurator import Configurator

BATCH = 50  # records asked for per reply (the board's EXPORT_MAX)


class ExportError(Exception):
    """A record failed its checks, or the store cannot be used; nothing was acknowledged."""


def record_crc(seq, kind, payload):
    """The CRC-32 a journal record has on flash (docs/journal.md, "Journal records"): the
    firmware's own framing (pitboss.store.record.frame)."""
    buf = bytearray(OVERHEAD)
    mv = memoryview(buf)
    frame(buf, mv[:8], mv[:HDR], kind, seq, payload)
    return struct.unpack_from("<I", buf, HDR)[0]


def export_mac(key, seq, kind, crc, payload):
    return hmac.new(key, b"%d %d %d " % (seq, kind, crc) + payload, hashlib.sha256).hexdigest()


def store_path(folder, board_id):
    return os.path.join(folder, "%s.jsonl" % board_id)


def read_store_lines(path):
    """Every line of a store: the parsed JSON, or the line's text where it is not JSON."""
    out = []
    with open(path, "rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append(raw.decode("utf-8", "replace").rstrip("\n"))
    return out


def verifies(obj, key):
    """Is this store line a record whose CRC and MAC check out under the board's key?"""
    try:
        check(obj, key, obj["seq"])
    except (ExportError, KeyError, TypeError):
        return False
    return True


def _gap_line(obj):
    g = obj.get("gap") if isinstance(obj, dict) else None
    return (isinstance(g, list) and len(g) == 2 and all(type(x) is int for x in g)
            and set(obj) == {"gap", "reason"})


def store_tail(path, key):
    """(resume point, damaged lines) of a store, after cutting off a torn last line.

    The resume point is the highest seq whose record verifies (CRC and MAC under the
    board's key): a line added or changed by hand (`{"seq": 5}`) is not trusted to say
    where the store ends, or the next export would skip records or write them twice.
    Every line that is neither a verified record nor a gap line is reported by its line
    number (1-based), for the operator to look at; nothing in the store is rewritten."""
    if not os.path.exists(path):
        return 0, []
    with open(path, "rb") as f:
        data = f.read()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # the last write was cut short: it was never acknowledged
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    last, damaged = 0, []
    for n, obj in enumerate(read_store_lines(path), 1):
        if isinstance(obj, dict) and "seq" in obj and verifies(obj, key):
            last = max(last, obj["seq"])
        elif not _gap_line(obj):
            damaged.append(n)
    return last, damaged


def check(rec, key, want):
    """Raise ExportError unless `rec` (one record of an export reply) is record `want`,
    intact and made by the board holding `key`."""
    try:
        seq, kind, crc = rec["seq"], ord(rec["kind"]), rec["crc"]
        payload = rec["payload"].encode()
        mac = rec["mac"]
    except (KeyError, TypeError, AttributeError) as e:
        raise ExportError("malformed export record: %s" % e)
    if seq != want:
        raise ExportError("record seq %d where %d was expected" % (seq, want))
    if record_crc(seq, kind, payload) != crc:
        raise ExportError("record %d: CRC does not match its payload" % seq)
    if not hmac.compare_digest(export_mac(key, seq, kind, crc, payload), mac):
        raise ExportError("record %d: MAC does not verify under the key for this board"
                          % seq)
    return {"seq": seq, "kind": rec["kind"], "crc": crc, "mac": mac,
            "payload": rec["payload"]}


def _append(path, lines):
    with open(path, "ab") as f:
        f.write("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines).encode())
        f.flush()
        os.fsync(f.fileno())


def export(target, keys, board_id, folder, batch=BATCH, ack=True, shown=None):
    """Export from `target` (a BoardTarget or LocalTarget) into folder/BOARD.jsonl and
    acknowledge. Returns {"exported", "first", "last", "acked", "store", "damaged"}.
    shown: a progress bar (host_tools.progress) told of each batch stored."""
    key = keys.load_key(board_id)
    os.makedirs(folder, exist_ok=True)
    path = store_path(folder, board_id)
    last, damaged = store_tail(path, key)
    start = last + 1
    n = 0
    first = None
    while True:
        reply = target.commands(["export %d %d" % (start, batch)])[0]
        if not reply.get("ok", True) or "records" not in reply:
            raise ExportError("the board refused the export: %s"
                              % reply.get("error", {}).get("message", reply))
        recs = reply["records"]
        if not recs:
            break
        out = []
        if recs[0]["seq"] != start:
            if recs[0]["seq"] < start:
                raise ExportError("the board sent seq %d, asked for %d"
                                  % (recs[0]["seq"], start))
            # Records no longer on the board (quarantined after damage, or older than
            # this store): said in the store, never papered over.
            out.append({"gap": [start, recs[0]["seq"] - 1],
                        "reason": "not on the board (first kept: %d)" % reply["first"]})
            start = recs[0]["seq"]
        for rec in recs:
            out.append(check(rec, key, start))
            start += 1
        _append(path, out)
        n += len(recs)
        if shown is not None:  # progress: records stored so far
            shown.update(len(recs))
        first = recs[0]["seq"] if first is None else first
        if reply.get("truncated"):
            # The board streams its reply (pitboss.verbs.records.ExportRows) and found a record it
            # could not read partway: what came before it is stored (each MAC checked),
            # the rest is the board's damage to report, not to skip.
            raise ExportError("the board's journal is damaged after seq %d: %s"
                              % (start - 1, reply["truncated"]))
    result = {"exported": n, "first": first, "last": start - 1, "acked": reply["acked"],
              "store": path, "damaged": damaged}
    if ack and start - 1 > reply["acked"]:
        r = Configurator(target, board_id, keys).signed("export-ack %d" % (start - 1))
        if not r.get("ok"):
            raise ExportError("the board refused the acknowledgement: %s"
                              % r["error"]["message"])
        result["acked"] = r["acked"]
    return result


def read_store(path):
    """Every line of a store, parsed (for audits and tests)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
