# Which board this firmware is running on: the module /board.py, with the boards/*.py
# interface (NAME, PERIPHERALS, pins, bus factories such as shoe_uart(), rfid(),
# display_i2c(), and budgets such as JOURNAL_SECTORS). The flasher copies boards/<name>.py
# there (the pitboss image's frozen variant freezes it as `board`), so nothing is chosen
# at run time. A host running the firmware in-process passes its board module to
# pitboss.app.App itself (tests: `import boards.virtual as hw`); the firmware never
# imports the repository's boards package.
_board = None


def get():
    global _board
    if _board is None:
        try:
            import board as b
        except ImportError:
            raise ImportError("no board module: a flashed board has /board.py "
                              "(`pitboss flash`); on a host, pass the board to App()")
        _board = b
    return _board
