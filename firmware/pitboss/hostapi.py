# The board's App driven by a host in the raw REPL (the virtual board's tests, bulk
# rounds, the benchmark): `import pitboss.hostapi as A`, then A.commands(...),
# A.feed_shoe(...), A.poll(), A.soak(...). Every path ends in the same
# Controller.command() the main loop calls. (A board gets this module: the host's
# requests run on it. It builds nothing until called.)
import json

from pitboss.app import app
from pitboss.loop import json_writer


def _ctl():
    """The App's controller, set to draw and save inside each line: no main loop runs
    while the host holds the REPL, so nothing would redraw after a reply or save the
    meters in an idle pass (main() sets both again when the loop starts)."""
    ctl = app().ctl
    ctl.draw_after_reply = False
    ctl.save_when_idle = False
    ctl.meters.flush()  # what the loop counted before it was stopped
    ctl.redraw()
    return ctl


def command(line):
    # Through json_writer, as the loop answers: once main() has run (service mode runs
    # the loop too), recall's rounds are a Rows stream, which json.dumps cannot write.
    import sys
    json_writer(sys.stdout)(_ctl().command(line))


def commands(lines):
    for line in lines:
        command(line)


def soak(lines):
    """Run many command lines and print one summary line with the heap after a collect:
    a soak test watches mem_free across batches for drift (leaks)."""
    import gc

    ctl = _ctl()
    ok = refused = 0
    for line in lines:
        if ctl.command(line).get("ok"):
            ok += 1
        else:
            refused += 1
    gc.collect()
    print(json.dumps({"ok": ok, "refused": refused, "mem_free": gc.mem_free(),
                      "mem_alloc": gc.mem_alloc()}))


def play(plans_json):
    """Many rounds in one call (a host's batch of simulated shoe rounds): each plan is
    [lines before the deal's cards, the shoe's frames as text, lines after]. Prints one
    JSON line per round: its last reply (the settlement), or the first refusal."""
    for before, frames, after in json.loads(plans_json):
        ctl = _ctl()
        replies = [ctl.command(ln) for ln in before]
        feed_shoe(frames.encode())
        replies += app().poll()
        replies += [ctl.command(ln) for ln in after]
        bad = [r for r in replies if not r.get("ok")]
        print(json.dumps(bad[0] if bad else replies[-1]))


def feed_shoe(data):
    """Bytes as the shoe's UART would receive them (the virtual board's simulated shoe)."""
    feed = getattr(app().hw.shoe_uart(), "feed", None)
    if feed is None:
        raise OSError("this board's shoe is a real UART: the shoe itself sends the cards")
    feed(data)


def poll():
    for reply in app().poll():
        print(json.dumps(reply))


def screen():
    """What the display shows, as hex MONO_VLSB bytes (for `pitboss screenshot`): the
    simulated controller's own RAM on the virtual board, else the driver's buffer."""
    from binascii import hexlify

    ram = app().display_ram()
    # (none: no display wired, or it failed at boot: its display_fault tilt says so)
    print(hexlify(bytes(ram if ram is not None else b"")).decode())
