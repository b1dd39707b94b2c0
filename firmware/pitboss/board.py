# The board this firmware runs on, and the drivers built from its buses: the one place
# they are built. A board module (boards/*.py: NAME, PERIPHERALS, pins, the journal's
# budget, bus factories shoe_uart(), rfid(), display_i2c(), ...) creates the `machine`
# objects; nothing here imports the boards/ package.
#
# On a flashed board that module is /board.py: the flasher copies boards/<name>.py there,
# so there is nothing to choose at run time. A host running the firmware (CPython, the VM
# on an unflashed checkout) names the board first: use(module).
_board = None


def use(module):
    """The board module the firmware runs on, where no /board.py exists (host, tests)."""
    global _board
    _board = module


def get():
    global _board
    if _board is None:
        import board as b

        _board = b
    return _board


def display(hw):
    """The SSD1306 driver on the board's I2C bus (a framebuf.FrameBuffer with show())."""
    from pitboss.hw.ssd1306 import SSD1306

    i2c, addr = hw.display_i2c()
    return SSD1306(i2c, addr, hw.DISPLAY_WIDTH, hw.DISPLAY_HEIGHT)


def reader(hw):
    """The MFRC522 RFID reader on the board's SPI bus and pins."""
    from pitboss.hw.mfrc522 import MFRC522

    return MFRC522(*hw.rfid())
