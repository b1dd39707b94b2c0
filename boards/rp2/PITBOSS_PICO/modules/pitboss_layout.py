# The pitboss image's flash layout: the ONE place it is written. The Pico's 2 MB flash
# (W25Q16JV, memory-mapped at 0x10000000) is split, from its start:
#
#   0x10000000  CODE      640 KB  the MicroPython core (and frozen code in the release
#                                 variant); the UF2 writes only here
#   0x100A0000  ROMFS     256 KB  the firmware's .mpy, executed in place, mounted at /rom
#                                 (`pitboss flash`: mpremote romfs deploy)
#   0x100E0000  STORAGE  1152 KB  rp2.Flash()'s area (MICROPY_HW_FLASH_STORAGE_BYTES),
#                                 split in two by offsets into it (rp2.Flash(start=, len=)):
#     +0x00000  JOURNAL   768 KB  the raw journal region: page programs, no file system
#                                 (768 KB: 20 years of wear for the most erasing table,
#                                 docs/journal.md "Wear"; 627 KB was the least)
#     +0xC0000  LFS       384 KB  littlefs, mounted at /: configuration, keys, A/B slots
#
# Who reads it: the board's mpconfigboard.cmake (parses the NAME = const(...) lines below
# into MICROPY_HW_ROMFS_BYTES / MICROPY_HW_FLASH_STORAGE_BYTES, so C and Python cannot
# disagree), the board's frozen _boot.py (mounts LFS only), boards/pico.py
# (journal_flash(): the raw region as rp2.Flash), pitboss.store.integrity (hashes CODE and
# ROMFS), and the host (host_tools/emu/pico: the emulator and `pitboss flash`), which loads
# this file by path. Frozen into the image, so `import pitboss_layout` works on the
# pitboss image only: a stock image has no such module (and no raw region).
# Every value is a multiple of the 4 KB sector; CODE + ROMFS + STORAGE is the flash.
from micropython import const

FLASH_BASE = const(0x10000000)
FLASH_BYTES = const(0x200000)
CODE_BYTES = const(0xA0000)
ROMFS_BYTES = const(0x40000)
STORAGE_BYTES = const(0x120000)
JOURNAL_START = const(0x0)
JOURNAL_BYTES = const(0xC0000)
LFS_START = const(0xC0000)
LFS_BYTES = const(0x60000)
