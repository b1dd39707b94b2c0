# ESP32-DevKitC (ESP32-WROOM-32): which peripherals the table controller has and on which pins.
#
# Flashing copies this file to the board as /board.py (compiled to /board.mpy), so the
# firmware only ever does `import board`; this is the one place that creates `machine`
# objects. The data is plain module constants so host tests can check the wiring without
# a board; `machine` is imported inside the factories so this module imports on CPython.
#
# Wiring (GPIO numbers), chosen to stay off the pins that break the module:
#   GPIO6-11 are the WROOM's SPI flash, GPIO1/3 are UART0 = the USB REPL, and the
#   strapping pins 0, 2, 12 and 15 decide boot mode/flash voltage, so none of them is used.
#   shoe          UART2  TX 17  RX 16     the classic UART2 pins (free on WROOM, no PSRAM)
#   RFID MFRC522  VSPI (SPI id 2)  SCK 18  MOSI 23  MISO 19  CS 5  RST 4
#                 CS on GPIO5 is VSPI's own CS pin; it is a strapping pin, but it must be
#                 high at boot and a chip select idles high, so the reader cannot upset boot.
#   SSD1306 OLED  I2C0   SDA 21  SCL 22   address 0x3C, 128x64
#   status LED    GPIO25 (active high)    the DevKitC has no user LED, GPIO2 is a strap
#   buttons       GPIO32, GPIO33 to GND, internal pull-ups (34-39 have none), pressed = 0
#   service switch  GPIO27 to GND (internal pull-up): the logic door's key switch; held
#                 closed at reset = service mode (REPL, flashing), open = production
try:
    from micropython import const
except ImportError:  # CPython (host tests): const() is only a compile-time hint
    # `__x` makes the parameter positional-only for type checkers, like the stub's;
    # MicroPython has no `/` syntax for that.
    def const(__x):
        return __x


NAME = "esp32_devkitc"
PLATFORM = "esp32"
MCU = "ESP32-WROOM-32"
# What exists on this board; firmware asks here before calling a factory.
PERIPHERALS = ("shoe", "rfid", "display", "led", "buttons")

SHOE_UART_ID = const(2)
SHOE_TX = const(17)
SHOE_RX = const(16)
# 9600 8N1 is what the shoe speaks; rxbuf holds several seconds of shoe traffic so a
# slow evaluator pass never drops a card.
SHOE_BAUD = const(9600)
SHOE_RXBUF = const(256)
# machine.UART can sit in select.poll beside the input (pitboss.loop.serve). ESP32 is
# unproven here (no emulator): the port's UART implements the stream poll as rp2's does.
SHOE_POLLABLE = True

RFID_SPI_ID = const(2)
RFID_SCK = const(18)
RFID_MOSI = const(23)
RFID_MISO = const(19)
RFID_CS = const(5)
RFID_RST = const(4)
# The MFRC522 allows 10 MHz; 1 MHz keeps flying leads to the reader reliable.
RFID_BAUD = const(1_000_000)

DISPLAY_I2C_ID = const(0)
DISPLAY_SDA = const(21)
DISPLAY_SCL = const(22)
DISPLAY_ADDR = const(0x3C)
DISPLAY_WIDTH = const(128)
DISPLAY_HEIGHT = const(64)
DISPLAY_FREQ = const(400_000)

LED_PIN = const(25)
# The logic-door switch, read once at boot (pitboss.service): closed (0) = service mode.
SERVICE_PIN = const(27)
BUTTON_PINS = (32, 33)


def pins():
    """Role -> GPIO number, for wiring docs and the host-side conflict check."""
    return {
        "shoe_tx": SHOE_TX,
        "shoe_rx": SHOE_RX,
        "rfid_sck": RFID_SCK,
        "rfid_mosi": RFID_MOSI,
        "rfid_miso": RFID_MISO,
        "rfid_cs": RFID_CS,
        "rfid_rst": RFID_RST,
        "display_sda": DISPLAY_SDA,
        "display_scl": DISPLAY_SCL,
        "led": LED_PIN,
        "button_a": BUTTON_PINS[0],
        "button_b": BUTTON_PINS[1],
        "service": SERVICE_PIN,
    }


def shoe_uart():
    """The shoe's UART (machine.UART: read/readinto/any/write)."""
    from machine import UART

    return UART(
        SHOE_UART_ID,
        baudrate=SHOE_BAUD,
        tx=SHOE_TX,
        rx=SHOE_RX,
        rxbuf=SHOE_RXBUF,
    )


def rfid():
    """(spi, cs, rst) for the MFRC522 driver; cs idles high, rst high = running."""
    from machine import SPI, Pin

    spi = SPI(
        RFID_SPI_ID,
        baudrate=RFID_BAUD,
        polarity=0,
        phase=0,
        sck=Pin(RFID_SCK),
        mosi=Pin(RFID_MOSI),
        miso=Pin(RFID_MISO),
    )
    cs = Pin(RFID_CS, Pin.OUT, value=1)
    rst = Pin(RFID_RST, Pin.OUT, value=1)
    return spi, cs, rst


def display_i2c():
    """(i2c, addr) of the SSD1306."""
    from machine import I2C, Pin

    i2c = I2C(DISPLAY_I2C_ID, sda=Pin(DISPLAY_SDA), scl=Pin(DISPLAY_SCL), freq=DISPLAY_FREQ)
    return i2c, DISPLAY_ADDR


def led():
    """Status LED as a machine.Pin (on()/off()/value())."""
    from machine import Pin

    return Pin(LED_PIN, Pin.OUT, value=0)


def buttons():
    """The two buttons as input Pins; value() is 0 while pressed."""
    from machine import Pin

    return tuple(Pin(n, Pin.IN, Pin.PULL_UP) for n in BUTTON_PINS)


def service_switch():
    """True if the logic-door service switch is held closed (reads 0 through the pull-up).
    Read once at boot by pitboss.service; the pin is left as an input."""
    from machine import Pin

    return Pin(SERVICE_PIN, Pin.IN, Pin.PULL_UP).value() == 0



def unique_id():
    """The board's unique id as hex (ESP32: its factory MAC, machine.unique_id()):
    what the host's key store names this board's key by (`version` reports it)."""
    from binascii import hexlify

    from machine import unique_id

    return hexlify(unique_id()).decode()


def watchdog(timeout_ms):
    """The hardware watchdog (machine.WDT), started now: from here the main loop must
    feed() it within timeout_ms or the chip resets and boots into the journal's recovery.
    Created by pitboss.loop.main() only after the boot (which may take longer)."""
    from machine import WDT

    return WDT(timeout=timeout_ms)


def set_rtc(tm):
    """Set the ESP32's RTC (what time.time() reads) from a time.gmtime() tuple: the
    host's time, sent when it connects (pitboss.hw.clock)."""
    from machine import RTC

    # RTC.datetime wants (year, month, day, weekday, hours, minutes, seconds, subseconds)
    RTC().datetime((tm[0], tm[1], tm[2], tm[6], tm[3], tm[4], tm[5], 0))


# The journal's flash region's budget (the firmware builds the region): sector files on the filesystem, as on the
# stock Pico image (boards/pico.py says why): 512 KB of the filesystem.
JOURNAL_SECTORS = const(128)
