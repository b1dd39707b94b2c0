"""The side channel of an emulated board: its control socket, beside the `tty` in the
board's state dir. The virtual board's bridge (host_tools/emu/vm/bridge.mjs) and the emulated
Pico (host_tools/emu/pico/control.mjs) speak the same requests for the shoe's UART:

    {"cmd": "uart", "id": 1, "hex": "..."}   bytes onto the shoe UART's receive line
    {"cmd": "uart_tx", "id": 1}              what the firmware sent on it since last asked

so the host's simulated shoe (host_tools.emu.shoe_sim.AckingShoe) deals into a running table
without touching the serial port the protocol lines use, as a real shoe does on its own
UART. A real board has no side channel: its shoe is a device on the UART.
"""
import json
import socket
import time
from pathlib import Path


class Control:
    """One JSON request per connection, one JSON reply."""

    def __init__(self, path, timeout=900.0):
        self.path = str(path)
        self.timeout = timeout

    def __call__(self, cmd, **req):
        req["cmd"] = cmd
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(self.timeout)
            s.connect(self.path)
            s.sendall((json.dumps(req) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                got = s.recv(65536)
                if not got:
                    raise ConnectionError("the board closed its control socket")
                buf += got
        reply = json.loads(buf)
        if "error" in reply:
            raise ValueError("board control %s: %s" % (cmd, reply["error"]))
        return reply

    def shoe(self, data, uart=1, wait=True):
        """Bytes onto the shoe's UART (the Pico puts them on the line at its baud rate,
        and with wait=True answers once they are all sent)."""
        return self("uart", id=uart, hex=bytes(data).hex(), wait=wait)

    def shoe_tx(self, uart=1):
        """What the firmware sent on the shoe's UART since the last call."""
        return bytes.fromhex(self("uart_tx", id=uart)["hex"])

    def acking_shoe(self, timeout=0.25, uart=1):
        """The simulated shoe on this board's UART: frames resent until acknowledged."""
        from host_tools.emu.shoe_sim import AckingShoe

        return AckingShoe(lambda f: self.shoe(f, uart), lambda: self.shoe_tx(uart),
                          time.monotonic, time.sleep, timeout=timeout, step=0.01)


def control_for(port):
    """The control socket of the emulated board behind `port` (its state dir's tty), or
    None (a real board)."""
    p = Path(port)
    sock = p.parent / "ctl.sock"
    if p.name == "tty" and sock.exists():
        return Control(sock)
    return None
