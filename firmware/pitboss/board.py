# Which board this firmware is running on, as a module with the boards/*.py interface
# (NAME, PERIPHERALS, shoe_uart(), rfid(), display(), led(), buttons()).
#
# On a flashed board that module is /board.py: the flasher copies boards/<name>.py there,
# so there is nothing to choose at run time. On the host (CPython, or the VM running an
# unflashed checkout) there is no /board.py and the repository's `boards` package picks
# one by sys.platform, which needs the repository root on sys.path.
_board = None


def get():
    global _board
    if _board is None:
        try:
            import board as b
        except ImportError:
            import sys

            import boards

            b = boards.load(boards.name_for_platform(sys.platform))
        _board = b
    return _board
