"""Issue 29 item 14: a logic-door (service) switch held through the emulated Pico's
control socket stays held across a watchdog reset, as a switch on a real board does
(the daemon restarts the chip; before, the restarted chip read the pin's pull-up and
came back in production). On the stock MicroPython image, no firmware flashed: the
chip's own REPL reads the pin and resets itself (machine.reset(): the same restart
path as the watchdog's timer, reason 2)."""
import subprocess
import sys
import time

import serial

from host_tools.emu.pico import Control
from host_tools.emu.vboard import pico_board
from host_tools.emu.vboard_state import status

import boards.pico as pico_def

PIN = pico_def.SERVICE_PIN


def _repl(port, code, timeout=120):
    """Run code at the friendly REPL through mpremote (the chip's own answer)."""
    r = subprocess.run([sys.executable, "-m", "mpremote", "connect", port, "exec", code],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_switch_held_through_the_control_socket_survives_a_watchdog_reset(tmp_path):
    # uf2="stock": the pitboss image boots its table with Ctrl-C off (no REPL to reach)
    with pico_board(tmp_path / "flash", service=False, uf2="stock") as st:
        port, ctl = st["port"], Control(st["ctl"])
        read = "import machine; print(machine.Pin(%d, machine.Pin.IN, " \
               "machine.Pin.PULL_UP).value())" % PIN
        assert _repl(port, read) == "1"  # production: nothing holds the switch
        ctl("gpio", pin=PIN, value=0)  # the technician holds it
        assert _repl(port, read) == "0"
        with serial.Serial(port, 115200, timeout=1) as s:
            s.write(b"\r\x03\x03import machine\r\nmachine.reset()\r\n")
            s.flush()
            time.sleep(0.5)
        deadline = time.monotonic() + 300
        state_dir = st["ctl"].rsplit("/", 1)[0]
        while status(state_dir=state_dir).get("resets", 0) < 1:
            assert time.monotonic() < deadline, "the chip did not reset"
            time.sleep(0.5)
        assert _repl(port, read) == "0"  # still held after the reset
        ctl("gpio", pin=PIN, value=None)  # released: the pull-up again
        assert _repl(port, read) == "1"


def test_board_start_failures_say_their_cause(tmp_path):
    # Issue 29 item 5: `board start --kind pico --uf2 bad.uf2` or `--gpio 99=0` said
    # "did not come up within 30.0s; log:" and nothing more; the cause sat in board.log
    # among Node's stack trace. Now the cause is the one line.
    bad = tmp_path / "bad.uf2"
    bad.write_bytes(b"garbage")
    for args, cause in ((["--gpio", "99=0"], "no GPIO 99"),
                        (["--uf2", str(bad)], "not a UF2")):
        r = subprocess.run([sys.executable, "-m", "host_tools", "board", "start", "--kind",
                            "pico", "--state-dir", str(tmp_path / "s"), *args],
                           capture_output=True, text=True, timeout=120)
        err = r.stderr.strip()
        assert r.returncode == 2 and len(err.splitlines()) == 1, err
        assert cause in err and "board.log" in err and "Traceback" not in err, err
