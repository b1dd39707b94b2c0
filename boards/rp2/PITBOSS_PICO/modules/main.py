# The pitboss image's entry point, frozen (a frozen main.py runs before any file of that
# name: shared/runtime/pyexec.c), so no main.py on littlefs can take its place.
# Before a byte of the firmware in ROMFS runs, the ROMFS must be the one the last
# completed `pitboss flash` deployed: pitboss_program.check() hashes it against the
# manifest on littlefs. A deploy cut part way (manifest still pending, or the ROMFS not
# what it lists) never starts: the board answers every protocol line with a
# firmware_mismatch tilt instead (pitboss_program.tilted), so no mix of old and new code
# ever runs.
import micropython

micropython.kbd_intr(-1)  # until the service switch is read: no Ctrl-C into the REPL
import pitboss_program

# With the service switch held Ctrl-C is on from here (as pitboss.run would turn it on):
# a host breaking in while the check hashes the program gets the REPL, not a loop that
# later reads its Ctrl-C as a line.
if pitboss_program.service():
    micropython.kbd_intr(3)
if pitboss_program.lfs != "mounted":  # _boot.py ran before the USB serial was up
    print("pitboss _boot: " + pitboss_program.lfs)

_why = pitboss_program.check()
if _why is None:
    del _why
    import pitboss.run  # noqa: F401  (the table: /rom/pitboss/run.mpy)
else:
    pitboss_program.tilted(_why)
