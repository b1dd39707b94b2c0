# Production or service mode, decided once at boot by a physical act (docs/security.md).
#
# Production (the switch open, the normal state under a table): /main.py runs the table's
# main loop, Ctrl-C is an ordinary byte (micropython.kbd_intr(-1)) and the loop never
# exits, so the USB serial port speaks only the bench protocol: no REPL, no file access,
# no way to read the key. Service (the logic-door switch held closed at reset): the main
# loop does not start and the port is MicroPython's REPL, for flashing and provisioning.
# The switch is read once, here, before anything else is imported: flipping it while the
# board runs changes nothing until the next reset.
_service = None


def requested(hw):
    """True if `hw` (a boards/*.py module) had its service switch held at boot."""
    global _service
    if _service is None:
        fn = getattr(hw, "service_switch", None)
        try:
            _service = bool(fn()) if fn is not None else False
        except Exception:  # a switch that cannot be read is not a held switch
            _service = False
    return _service
