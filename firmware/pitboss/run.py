# Imported by /main.py at boot: production starts the table controller's main loop (which
# never returns); service mode leaves the REPL to the host (pitboss.service).
from pitboss import board, service

if service.requested(board.get()):
    import micropython

    micropython.kbd_intr(3)  # Ctrl-C interrupts again: the REPL is the point of service
    print("PITBOSS service mode: REPL open for flashing and provisioning; "
          "release the service switch and reset to play")
else:
    from pitboss.app import main

    main()
