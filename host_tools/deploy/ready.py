"""A board ready for one command: `--port virtual|pico` starts a throw-away emulated board
and flashes it first (a fresh one has no firmware), any other port is used as it is, held
for the command (host_tools.link.ports.resolve_port). The one place that says "flash a
throw-away board first": the raw REPL's open_board here, the protocol's open_table
(host_tools.table.targets) and the commands go through ready_port.
"""
import contextlib

from host_tools.emu.vboard_state import THROWAWAY_PORTS
from host_tools.link.boardlink import Board
from host_tools.link.ports import resolve_port


@contextlib.contextmanager
def ready_port(port, flash=False, progress=None):
    """The device path of `port`, held for the `with` block; a throw-away board (or any,
    with flash=True) has the firmware brought up to date first."""
    with resolve_port(port) as device:
        if flash or port in THROWAWAY_PORTS:
            from host_tools.deploy.flash import flash as do_flash
            do_flash(device, progress=progress)
        yield device


@contextlib.contextmanager
def open_board(port, flash=False, progress=None):
    """Connect to `port` ('virtual' or 'pico' starts a throw-away board). With flash=True
    the firmware is brought up to date first (a fresh throw-away board has none)."""
    with ready_port(port, flash, progress) as device:
        b = Board(device)
        try:
            yield b
        finally:
            b.close()
