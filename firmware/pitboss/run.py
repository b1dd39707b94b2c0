# Imported by /main.py at boot: the table controller's main loop, which never returns.
# Both modes run it (host tools speak protocol lines to it in both); service mode
# (pitboss.service) leaves Ctrl-C on, so a host can break into the REPL to flash or verify.
from pitboss.hw import board
from pitboss import service

if service.requested(board.get()):
    import micropython

    micropython.kbd_intr(3)  # Ctrl-C interrupts again: the REPL is the point of service
    print("PITBOSS service mode: the table runs; Ctrl-C for the REPL (flashing, "
          "provisioning); release the service switch and reset for production")
    from pitboss.loop import main

    main(service=True)
else:
    from pitboss.loop import main

    main()
