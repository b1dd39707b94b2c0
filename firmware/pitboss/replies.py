# Writing the table's replies to the serial line (pitboss.loop's output): a reply as one
# text written at once, and the long ones (recall's rounds, export's records) a row at a
# time as they are read, so no reply needs its whole text on the heap.
import json


def json_writer(stream, text_of=None):
    """write(reply) for the serial line: a reply as one text, written at once (or, where
    the heap has no block for it, streamed by json.dump piece by piece); a value marked
    stream_rows (recall's pitboss.verbs.records.Rows, export's
    ExportRows) is written one row at a time as it is read, so `recall 50` never holds
    50 rounds, nor `export` 4 KB of records with their MACs. text_of(reply): the
    reply's JSON where it is already made (Controller.reply_text: a settlement's,
    from its journal record), else None."""
    w = stream.write

    def write(reply):
        rows = None
        for k in reply:
            if getattr(reply[k], "stream_rows", False):
                rows = k
        if rows is None:
            # One write of the whole text where the heap has it: json.dump writes each
            # key, value and separator to the port by itself, and on a Pico every write to
            # the USB serial costs its own flush: a six-seat Pai Gow settlement's reply
            # (~2.5 KB of JSON) took 25 ms that way and ~2 ms as one write (issue 27).
            # Piece by piece still where no block holds it (a stock image's fragmented
            # heap).
            try:
                text = text_of(reply) if text_of is not None else None
                if text is None:
                    text = json.dumps(reply)
            except MemoryError:
                json.dump(reply, stream)
                w("\n")
                return
            w(text)
            w("\n")
            return
        w("{")
        _fields(w, stream, reply, rows)
        json.dump(rows, stream)
        w(": [")
        n = 0
        try:
            for row in reply[rows]:
                if n:
                    w(", ")
                if type(row.get("payload")) in (bytes, bytearray):  # ExportRows' raw one
                    _write_record(w, stream, row, "payload")
                elif type(row.get("result")) is memoryview:  # Rows' stored result
                    _write_record(w, stream, row, "result")
                else:
                    json.dump(row, stream)
                n += 1
        except Exception as e:  # noqa: BLE001  (a record unreadable mid-reply: say so)
            w('], "truncated": ')
            json.dump(("%s: %s" % (type(e).__name__, e))[:80], stream)
            w("}\n")
            return
        w("]}\n")
    return write


def _write_record(w, stream, row, raw):
    """A row with one field as stored bytes, written 64 bytes at a time (never one str
    of it), the other fields by json.dump. raw "payload" (an export row): the record's
    bytes as a JSON string; it is the firmware's own compact JSON, so only its quotes and
    backslashes need escaping (json.dumps escaped every control character in it).
    raw "result" (a recall row): the stored result's JSON (a memoryview), as it is. A
    piece never ends inside a UTF-8 sequence."""
    w("{")
    _fields(w, stream, row, raw)
    quote = raw == "payload"
    w('"payload": "' if quote else '"result": ')
    b = row[raw]
    mv = memoryview(b)
    i, n = 0, len(b)
    while i < n:
        j = i + 64
        if j >= n:
            j = n
        else:
            while j > i + 1 and b[j] & 0xC0 == 0x80:  # a UTF-8 continuation byte
                j -= 1
        if quote:
            w(str(mv[i:j], "utf-8").replace("\\", "\\\\").replace('"', '\\"'))
        else:
            w(str(mv[i:j], "utf-8"))
        i = j
    w('"}' if quote else "}")


def _fields(w, stream, d, skip):
    """Every field of dict d but `skip`, as '"key": value, ' pieces by json.dump."""
    for k in d:
        if k != skip:
            json.dump(k, stream)
            w(": ")
            json.dump(d[k], stream)
            w(", ")
