# Which board this firmware is running on, and the drivers built from it. The board is
# the module /board.py, with the boards/*.py interface (NAME, PERIPHERALS, pins, bus
# factories such as shoe_uart(), rfid(), display_i2c(), and budgets such as
# JOURNAL_SECTORS); it imports nothing of the firmware, and the functions below are the
# one place its buses become drivers (docs/architecture.md). The flasher copies boards/<name>.py
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


def display(hw):
    """The SSD1306 on the board's I2C bus (hw.display_i2c()), as a framebuf.FrameBuffer
    with show(); see pitboss.hw.ssd1306. The virtual board's bus answers as the chip."""
    from pitboss.hw.ssd1306 import SSD1306

    i2c, addr = hw.display_i2c()
    return SSD1306(i2c, addr, hw.DISPLAY_WIDTH, hw.DISPLAY_HEIGHT)


def rfid(hw):
    """The MFRC522 on the board's SPI bus with its chip-select and reset pins
    (hw.rfid() gives (spi, cs, rst)): RFIDError if no chip answers."""
    from pitboss.hw.mfrc522 import MFRC522

    return MFRC522(*hw.rfid())


def journal_region(hw, root="", fs=None):
    """The journal's region (pitboss.store.region; docs/journal.md), or None where the
    board gives no budget for one (the virtual board: the journal's segment files).

    The raw region the board's flash gives (hw.journal_flash(): the pitboss image's
    rp2.Flash sub-region outside littlefs) where there is one; elsewhere
    hw.JOURNAL_SECTORS sector files under root + /journal/region (a stock Pico, the
    ESP32: the same format, slower). A root or fs of its own (a test's folder, the host's
    twin of a board) is never the chip's raw region."""
    sectors = getattr(hw, "JOURNAL_SECTORS", None)
    if sectors is None:
        return None
    if not root and fs is None:
        flash = getattr(hw, "journal_flash", None)
        dev = flash() if flash is not None else None
        if dev is not None:
            from pitboss.store.region import FlashRegion

            return FlashRegion(dev)
    from pitboss.store.region import FileRegion

    return FileRegion(root + "/journal/region", sectors, fs)
