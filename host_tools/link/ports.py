"""What `--port` may name, and `pitboss ports`: what is attached.

    /dev/ttyACM0     a serial device, as is
    virtual, pico    a throw-away emulated board for the one command (flashed first)
    board:NAME       a kept emulated board: `pitboss board start --name NAME` (the
                     default boards are named after their kind: board:virtual, board:pico)
    auto             the one board attached (a kept emulated board or a USB serial
                     device); several or none: an error listing what there is

Names are resolved once, by the CLI, before a command opens anything (resolve()).
"""
import contextlib
import os

from host_tools.emu.vboard_state import THROWAWAY_PORTS, state_root, status
from host_tools.link import portlock
from host_tools.output import BoardError

PREFIX = "board:"


def kept_boards():
    """[{name, kind, port, state_dir, switch}] of the emulated boards running now."""
    root = state_root()
    out = []
    if not root.is_dir():
        return out
    for d in sorted(root.iterdir()):
        if not (d / "state.json").exists():
            continue
        st = status(d)
        if st["running"]:
            out.append({"name": d.name, "kind": st["kind"], "port": st["port"],
                        "state_dir": str(d), "switch": st.get("switch")})
    return out


def serial_devices():
    """[{port, description, hwid}] of the USB serial devices (pyserial's list_ports):
    where a real board shows up. Plain /dev/ttyS* ports with nothing behind them are
    left out."""
    try:
        from serial.tools import list_ports
    except ImportError:
        return []
    out = []
    for p in list_ports.comports():
        if p.vid is None and not os.path.basename(p.device).startswith(("ttyACM", "ttyUSB")):
            continue
        out.append({"port": p.device, "description": p.description, "hwid": p.hwid})
    return out


def attached():
    """Everything a command could talk to: the kept emulated boards, then serial devices."""
    rows = [{"port": b["port"], "name": PREFIX + b["name"], "kind": b["kind"],
             "description": "emulated %s board (%s mode), state %s"
                            % (b["kind"], b["switch"] or "?", b["state_dir"])}
            for b in kept_boards()]
    rows += [{"port": d["port"], "name": None, "kind": "serial",
              "description": "%s [%s]" % (d["description"], d["hwid"])}
             for d in serial_devices()]
    return rows


def resolve(port):
    """The device path for a --port value (throw-away names stay as they are: the
    command starts its own board)."""
    if port is None or port in THROWAWAY_PORTS:
        return port
    if port.startswith(PREFIX):
        name = port[len(PREFIX):]
        if not name or "/" in name or name in (".", ".."):
            raise BoardError("--port %s: a board name is one word (board:pico)" % port)
        st = status(state_root() / name)
        if not st["running"]:
            running = ", ".join(PREFIX + b["name"] for b in kept_boards()) or "none"
            raise BoardError("no kept board named %r is running (running: %s; start one "
                             "with `pitboss board start --name %s`)" % (name, running, name))
        return st["port"]
    if port == "auto":
        rows = attached()
        if len(rows) == 1:
            return rows[0]["port"]
        if not rows:
            raise BoardError("--port auto: no board attached (no USB serial device, no "
                             "kept emulated board; `pitboss ports` lists them)")
        raise BoardError("--port auto: %d boards attached, name one: %s"
                         % (len(rows), ", ".join(r["name"] or r["port"] for r in rows)))
    return port


@contextlib.contextmanager
def resolve_port(port_arg: str | None):
    """`--port virtual` / `--port pico` -> a throw-away board's device path; anything else
    as is."""
    from host_tools.emu.vboard import virtual_board

    if port_arg in THROWAWAY_PORTS:
        # Service mode: a throw-away board is flashed for its one command, and today's
        # host table commands use the raw REPL (issue 11 moves them onto protocol lines).
        with virtual_board(kind=port_arg, service=True) as st:
            with portlock.held(st["port"]):
                yield st["port"]
    elif port_arg is None:
        yield port_arg
    else:
        # The whole command holds the port (every step it opens it for: probe, REPL,
        # protocol lines, a flash's mpremote runs), so no other command slips between.
        with portlock.held(port_arg):
            yield port_arg
