"""The checks an exported record passes before the floor stores it (docs/journal.md,
Export): its framing rebuilt from the payload must give the CRC-32 it has on flash, its
HMAC-SHA256 under the board's key must verify, and it must be the seq asked for.

What fails is refused, reported (an anomaly row) and never stored:
- `forged`: the MAC does not verify under this board's key (a record made or altered
  by anything but the board);
- `truncated`: the payload does not match its CRC (bytes lost or cut on the line), a
  record missing a field, or the board's own reply cut short ("truncated");
- `replayed`: a record behind the seq asked for (the collector asks from after the
  database's last, so no board sends one: a copy of a stored record or not, it is a
  replay on the line; host_tools.floor.puller);
- `gap`: records the board no longer has (set aside by a quarantine) between the last
  stored and the first sent: stored around, flagged, never papered over.
"""
import hmac
import json

from host_tools.table.export import export_mac, record_crc


class Refusal(Exception):
    """A record the floor refuses: kind is forged, truncated or replayed."""

    def __init__(self, kind, seq, detail):
        super().__init__("%s record %s: %s" % (kind, seq, detail))
        self.kind = kind
        self.seq = seq
        self.detail = detail


class Record:
    """A verified record: what the store keeps, and the event parsed from its payload."""

    __slots__ = ("seq", "kind", "crc", "mac", "payload", "event")

    def __init__(self, seq, kind, crc, mac, payload, event):
        self.seq = seq
        self.kind = kind
        self.crc = crc
        self.mac = mac
        self.payload = payload
        self.event = event


def verify(rec, key, want=None):
    """`rec` (one record of an export reply) as a Record, or Refusal."""
    seq = rec.get("seq") if isinstance(rec, dict) else None
    try:
        kind, crc, mac, payload = rec["kind"], rec["crc"], rec["mac"], rec["payload"]
        if not (isinstance(seq, int) and isinstance(kind, str) and len(kind) == 1
                and isinstance(crc, int) and isinstance(mac, str)
                and isinstance(payload, str)):
            raise TypeError("a field of the wrong type")
    except (KeyError, TypeError) as e:
        raise Refusal("truncated", seq, "malformed record (%s)" % e) from None
    if want is not None and seq != want:
        raise Refusal("replayed", seq, "seq %d where %d was expected" % (seq, want))
    data = payload.encode()
    if record_crc(seq, ord(kind), data) != crc:
        raise Refusal("truncated", seq, "the payload does not match its CRC-32")
    if not hmac.compare_digest(export_mac(key, seq, ord(kind), crc, data), mac):
        raise Refusal("forged", seq, "the MAC does not verify under this board's key")
    event = None
    if kind == "R":
        try:
            event = json.loads(payload)
        except ValueError:
            event = None  # an event the board wrote is JSON; kept raw if not
        if not isinstance(event, dict):
            event = None
    return Record(seq, kind, crc, mac, payload, event)
