# Runs on MicroPython with the protocol lines on stdin: the board's real main loop
# (pitboss.loop.serve, what main() runs forever in production), on the virtual board's
# simulated peripherals. serve() returns when stdin ends (main() would call it again).
import sys

sys.path.append("/repo")  # the repository's boards package, mounted there
import boards.virtual as hw  # noqa: E402
import pitboss.app as A  # noqa: E402
import pitboss.loop as L  # noqa: E402

A._app = A.App(hw, root="/flashroot", check_firmware=False)
L.serve(A._app, sys.stdin, L.json_writer(sys.stdout))
print("MAIN-RETURNED")
