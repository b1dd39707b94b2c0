# What a board gets of firmware/, in MicroPython's manifest vocabulary (micropython-lib,
# tools/manifestfile.py): the one list for the copy-to-flash path (`pitboss flash`,
# host_tools/deploy/manifest.py reads it), the ROMFS the pitboss image mounts, and the frozen
# release variant (boards/rp2/PITBOSS_PICO/manifest_frozen.py includes it).
#
# A package here is one layer of docs/architecture.md. The simulation room (pitboss/sim:
# seeded rounds and the xorshift generator, run by host tools and the VM tests) is not
# listed: no board gets it.
options.defaults(main=True)  # an image that freezes its own main.py includes this with main=False
if options.main:
    module("main.py")  # kept as source on a flashed board: MicroPython runs main.py by name
package("pitboss", files=(
    "__init__.py", "compat.py", "errors.py",        # the base every layer uses
    "service.py", "run.py", "app.py", "loop.py",    # boot, wiring, the main loop ...
    "linereader.py", "replies.py",                  # ... its lines in, replies out
    "controller.py", "recovery.py", "recording.py",  # the round as an event log ...
    "halting.py",                                   # ... its tilts and the shoe's cards
    "protocol.py", "vectors.py", "hostapi.py"))     # replies, vectors, the raw-REPL API
package("pitboss/verbs")  # the one verb table and its handlers, by job
package("pitboss/rules")  # cards, evaluator, profiles, paytables, rules/tables (generated)
package("pitboss/games")  # the game families and the round engine (table.py)
package("pitboss/store")  # flash: A/B slots, journal, meters, tilt, keys, deck map, integrity
package("pitboss/hw")     # the shoe, RFID reader, display and clock drivers, the board
