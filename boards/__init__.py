# Board registry, used on the host (flashing, tests, running the firmware on CPython).
#
# A flashed board never sees this package: the flasher copies the one chosen module to
# /board.py and the firmware does `import board`. The mapping below is how `--board auto`
# and a host without /board.py pick that module from MicroPython's sys.platform.
BOARDS = ("pico", "esp32_devkitc", "virtual")
PLATFORM_BOARDS = {"rp2": "pico", "esp32": "esp32_devkitc", "webassembly": "virtual"}
# Anything else (CPython's 'linux', 'darwin', ...) runs on simulated peripherals.
DEFAULT_BOARD = "virtual"


def name_for_platform(platform):
    return PLATFORM_BOARDS.get(platform, DEFAULT_BOARD)


def load(name):
    """The board module boards.<name>; ValueError for a name not in BOARDS."""
    if name not in BOARDS:
        raise ValueError("unknown board %r (known: %s)" % (name, ", ".join(BOARDS)))
    # A non-empty fromlist makes __import__ return the submodule itself, on both
    # CPython and MicroPython (which has no importlib).
    return __import__("boards." + name, None, None, ("NAME",))
