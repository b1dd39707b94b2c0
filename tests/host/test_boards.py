"""Board definitions (boards/): wiring sanity per chip, one interface for all, and the
virtual board's simulated peripherals (on CPython, and on MicroPython in the VM)."""
import sys

import pytest

import boards
from host_tools.emu.vm import run_script

REAL = ("pico", "esp32_devkitc")
FACTORIES = ("shoe_uart", "rfid", "display_i2c", "led", "buttons", "pins",
             "service_switch", "watchdog", "unique_id")


@pytest.mark.parametrize("name", boards.BOARDS)
def test_same_interface_everywhere(name):
    b = boards.load(name)
    assert b.NAME == name
    assert boards.name_for_platform(b.PLATFORM) == name
    for f in FACTORIES:
        assert callable(getattr(b, f)), f"{name} lacks {f}()"
    assert set(b.PERIPHERALS) <= {"shoe", "rfid", "display", "led", "buttons"}
    assert {"shoe", "display", "led", "buttons"} <= set(b.PERIPHERALS)
    assert b.DISPLAY_ADDR == 0x3C and (b.DISPLAY_WIDTH, b.DISPLAY_HEIGHT) == (128, 64)


def test_platform_mapping():
    assert boards.name_for_platform("rp2") == "pico"
    assert boards.name_for_platform("esp32") == "esp32_devkitc"
    assert boards.name_for_platform("webassembly") == "virtual"
    assert boards.name_for_platform(sys.platform) == "virtual"
    with pytest.raises(ValueError):
        boards.load("nosuch")


@pytest.mark.parametrize("name", REAL)
def test_no_pin_is_used_twice(name):
    pins = boards.load(name).pins()
    assert len(pins) == 13  # 12 peripheral pins and the service switch
    dup = {p for p in pins.values() if list(pins.values()).count(p) > 1}
    assert not dup, f"{name}: pins used twice: {dup}"


def test_pico_pins_are_valid_for_their_blocks():
    b = boards.load("pico")
    # RP2040 datasheet, GPIO function table (F1 SPI, F2 UART, F3 I2C).
    assert b.SHOE_UART_ID == 1 and b.SHOE_TX in (4, 8, 20, 24) and b.SHOE_RX in (5, 9, 21, 25)
    assert b.RFID_SPI_ID == 0
    assert b.RFID_SCK in (2, 6, 18, 22) and b.RFID_MOSI in (3, 7, 19, 23)
    assert b.RFID_MISO in (0, 4, 16, 20)
    assert b.DISPLAY_I2C_ID == 0
    assert b.DISPLAY_SDA in (0, 4, 8, 12, 16, 20) and b.DISPLAY_SCL in (1, 5, 9, 13, 17, 21)
    assert b.LED_PIN == 25                                   # the Pico's own LED
    assert all(p <= 28 and p not in (23, 24, 29) for p in b.pins().values() if p != 25)


def test_esp32_pins_avoid_flash_repl_and_boot_straps():
    b = boards.load("esp32_devkitc")
    pins = b.pins()
    flash, repl, straps = set(range(6, 12)), {1, 3}, {0, 2, 12, 15}
    used = set(pins.values())
    assert not used & flash and not used & repl
    # GPIO5 (VSPI CS) is the one strap used: a chip select idles high, as GPIO5 must at boot.
    assert used & straps == set() and used & {5} == {pins["rfid_cs"]}
    outputs = {v for k, v in pins.items() if k not in ("shoe_rx", "rfid_miso", "button_a",
                                                        "button_b", "service")}
    assert not outputs & set(range(34, 40)), "GPIO34-39 are input only"
    assert not {pins["button_a"], pins["button_b"], pins["service"]} & set(range(34, 40)), \
        "no pull-ups there"
    assert b.SHOE_UART_ID == 2 and b.RFID_SPI_ID == 2 and b.DISPLAY_I2C_ID == 0


def test_real_boards_import_without_machine():
    # The module is data plus factories; only calling a factory needs `machine`.
    for name in REAL:
        b = boards.load(name)
        with pytest.raises(ImportError):
            b.led()


def test_virtual_shoe_uart_on_cpython():
    v = boards.load("virtual")
    u = v.BufferUART(size=8)
    assert u.read() is None and u.any() == 0
    u.feed(b"AS\nKD\n")
    assert u.any() == 6 and u.readline() == b"AS\n"
    buf = bytearray(4)
    assert u.readinto(buf) == 3 and bytes(buf[:3]) == b"KD\n"
    u.feed(b"0123456789")                 # 8-byte buffer: two bytes overrun
    assert u.overruns == 2 and u.read() == b"01234567"
    u.write(b"ack")
    assert bytes(u.tx) == b"ack"
    assert v.shoe_uart() is v.shoe_uart()  # the host feeds the instance the firmware reads


def test_virtual_buttons_and_led():
    v = boards.load("virtual")
    a, b = v.buttons()
    seen = []
    a.irq(handler=lambda pin: seen.append(pin.value()))
    assert a.value() == 1
    a.press()
    a.release()
    assert seen == [0, 1] and b.value() == 1
    led = v.led()
    led.on()
    assert led.value() == 1
    with pytest.raises(OSError):
        v.rfid()


def test_simulated_ssd1306_follows_the_command_stream():
    v = boards.load("virtual")
    dev = v.SimSSD1306()
    bus = v.SimI2C()
    bus.devices[0x3C] = dev
    for c in (0xAF, 0x21, 2, 3, 0x22, 1, 1):      # on; columns 2..3, page 1
        bus.writeto(0x3C, bytes((0x80, c)))
    bus.writevto(0x3C, [b"\x40", bytes((0x01, 0x80, 0xFF))])
    assert dev.on
    # col 2, col 3, then the window wraps back to col 2 of page 1: one full "frame"
    assert dev.ram[128 + 2] == 0xFF and dev.ram[128 + 3] == 0x80 and dev.frames == 1
    assert dev.pixel(3, 15) == 1 and dev.pixel(3, 8) == 0
    assert sum(dev.ram) == 0xFF + 0x80
    with pytest.raises(OSError):
        bus.writeto(0x3D, b"\x80\xaf")


def test_simulated_ssd1306_bulk_data_equals_byte_by_byte():
    # The row-at-a-time copy of a data stream (SimSSD1306.feed) lands every byte where
    # the byte-by-byte model puts it: random windows, lengths that end mid-row and wrap.
    import random
    v = boards.load("virtual")
    rng = random.Random(11)
    bulk, slow = v.SimSSD1306(), v.SimSSD1306()
    for _ in range(300):
        c0 = rng.randrange(128)
        c1 = rng.randrange(c0, 128)
        p0 = rng.randrange(8)
        p1 = rng.randrange(p0, 8)
        cmds = bytes((0x00, 0x21, c0, c1, 0x22, p0, p1))
        data = bytes([0x40] + [rng.randrange(256) for _ in range(rng.randrange(1, 1500))])
        for dev in (bulk, slow):
            dev.start()
            dev.feed(cmds)
        bulk.start()
        bulk.feed(data)
        slow.start()
        for b in data:
            slow.byte(b)
        assert (bulk.ram, bulk.frames, bulk._col, bulk._page) == \
            (slow.ram, slow.frames, slow._col, slow._page)


@pytest.mark.vm  # the rest of the module is host (tests/support/tiers.py)
def test_virtual_board_on_micropython_draws_through_the_real_driver(tmp_path):
    script = tmp_path / "t.py"
    script.write_text(
        "import sys\n"
        "sys.path.append('/repo')\n"
        "import boards.virtual as b\n"
        "from pitboss.hw import board as drivers\n"
        "d = drivers.display(b)\n"
        "d.fill(0); d.text('AS', 0, 0, 1); d.show()\n"
        "dev = b.display_device()\n"
        "print(sys.platform, b.NAME, dev.on, dev.frames)\n"
        "for row in dev.lines()[:8]: print(row[:16])\n"
        "u = b.shoe_uart(); u.feed(b'7h\\n'); print(u.readline())\n")
    repo = boards.__file__.rsplit("/", 2)[0]
    r = run_script(script, mounts={f"{repo}/firmware": "/", f"{repo}/boards": "/repo/boards"},
                   check=True)
    lines = r.stdout.splitlines()
    assert lines[0] == "webassembly virtual True 2"       # init frame + our frame
    glyphs = lines[1:9]
    assert glyphs[0] == "...##.....####.." and glyphs[3] == ".######...####.."
    assert lines[9] == "b'7h\\n'"


@pytest.mark.parametrize("name", REAL)
def test_a_real_board_names_itself_by_its_chip_id(name, monkeypatch):
    # Issue 29 item 8: the key store names a key by what the board says it is.
    import types
    fake = types.ModuleType("machine")
    fake.unique_id = lambda: b"\xe6\x61\x41\x04\x03\x2f\x22\x2b"
    monkeypatch.setitem(sys.modules, "machine", fake)
    assert boards.load(name).unique_id() == "e6614104032f222b"
    assert boards.load("virtual").unique_id() is None
