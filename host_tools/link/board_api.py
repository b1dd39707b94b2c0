"""The host's calls on a board's raw REPL (bulk rounds, soaks, the screenshot, the
benchmark): MicroPython source the host sends with its code, so no board carries it
(firmware/manifest.py). It defines `A`, whose functions end in the table's own
Controller.command and App.poll (pitboss.app.app(), the board's one table)."""

SOURCE = '''\
import json as _json
from pitboss.app import app as _app


class A:
    app = _app

    @staticmethod
    def command(line):
        # Through json_writer, as the loop answers: once main() has run, recall's rounds
        # are a Rows stream, which json.dumps cannot write.
        import sys
        from pitboss.loop import json_writer
        json_writer(sys.stdout)(_app().ctl.command(line))

    @staticmethod
    def commands(lines):
        for line in lines:
            A.command(line)

    @staticmethod
    def soak(lines):
        # One summary line with the heap after a collect: a soak watches it for drift.
        import gc
        ctl = _app().ctl
        ok = refused = 0
        for line in lines:
            if ctl.command(line).get("ok"):
                ok += 1
            else:
                refused += 1
        gc.collect()
        print(_json.dumps({"ok": ok, "refused": refused, "mem_free": gc.mem_free(),
                           "mem_alloc": gc.mem_alloc()}))

    @staticmethod
    def play(plans_json):
        # Each plan: [lines before the deal's cards, the shoe's frames, lines after];
        # one JSON line per round: its last reply (the settlement), or the first refusal.
        for before, frames, after in _json.loads(plans_json):
            ctl = _app().ctl
            replies = [ctl.command(ln) for ln in before]
            A.feed_shoe(frames.encode())
            replies += _app().poll()
            replies += [ctl.command(ln) for ln in after]
            bad = [r for r in replies if not r.get("ok")]
            print(_json.dumps(bad[0] if bad else replies[-1]))

    @staticmethod
    def feed_shoe(data):
        # Bytes as the shoe's UART would receive them (the virtual board's simulated shoe).
        feed = getattr(_app().hw.shoe_uart(), "feed", None)
        if feed is None:
            raise OSError("this board's shoe is a real UART: the shoe itself sends the cards")
        feed(data)

    @staticmethod
    def poll():
        for reply in _app().poll():
            print(_json.dumps(reply))

    @staticmethod
    def screen():
        # The display as hex MONO_VLSB bytes: the simulated controller's own RAM on the
        # virtual board, else the driver's buffer.
        from binascii import hexlify
        a = _app()
        dev = getattr(a.hw, "display_device", None)
        print(hexlify(bytes(dev().ram if dev else a.display.fb.buf)).decode())
'''
