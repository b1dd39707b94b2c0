# Ctrl-C off first: until pitboss.run has read the service switch, nothing may drop this
# board into the REPL (docs/security.md). Service mode turns it back on.
import micropython

micropython.kbd_intr(-1)
import pitboss.run  # noqa: E402,F401  (the table: pitboss/loop.py's main loop)
