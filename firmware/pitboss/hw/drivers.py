# The one place that builds the table's drivers from what a board gives. A board module
# (boards/*.py, flashed as /board.py) is pins, bus factories and budgets, and imports
# nothing of the firmware; these functions turn its buses into drivers (docs/boards.md).


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
