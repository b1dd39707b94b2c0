# The pitboss image: RPI_PICO (the same chip, pins and SDK board) with the flash split by
# modules/pitboss_layout.py, the one place the layout is written: its `NAME = const(N)`
# lines become MICROPY_HW_ROMFS_BYTES and MICROPY_HW_FLASH_STORAGE_BYTES here.
set(PICO_BOARD "pico")
set(PICO_PLATFORM "rp2040")

file(STRINGS ${MICROPY_BOARD_DIR}/modules/pitboss_layout.py _pitboss_layout
     REGEX "^[A-Z_]+ = const\\(0x[0-9A-Fa-f]+\\)")
foreach(_line ${_pitboss_layout})
    string(REGEX REPLACE "^([A-Z_]+) = const\\((0x[0-9A-Fa-f]+)\\).*" "\\1;\\2" _kv "${_line}")
    list(GET _kv 0 _k)
    list(GET _kv 1 _v)
    math(EXPR "PITBOSS_${_k}" "${_v}")
endforeach()
math(EXPR _sum "${PITBOSS_CODE_BYTES} + ${PITBOSS_ROMFS_BYTES} + ${PITBOSS_STORAGE_BYTES}")
math(EXPR _parts "${PITBOSS_JOURNAL_BYTES} + ${PITBOSS_LFS_BYTES}")
if(NOT _sum EQUAL PITBOSS_FLASH_BYTES OR NOT _parts EQUAL PITBOSS_STORAGE_BYTES
   OR NOT PITBOSS_LFS_START EQUAL PITBOSS_JOURNAL_BYTES)
    message(FATAL_ERROR "pitboss_layout.py: CODE + ROMFS + STORAGE must be the flash, "
                        "JOURNAL + LFS the storage area, LFS right after JOURNAL")
endif()

list(APPEND MICROPY_DEF_BOARD
    MICROPY_HW_ROMFS_BYTES=${PITBOSS_ROMFS_BYTES}
    MICROPY_HW_FLASH_STORAGE_BYTES=${PITBOSS_STORAGE_BYTES}
)

# The USB serial input in bulk (cdc_rx/cdc_rx.c) and the free heap counted fast
# (heap/heap.c), user C modules of this board.
set(USER_C_MODULES ${MICROPY_BOARD_DIR}/cdc_rx/micropython.cmake
    ${MICROPY_BOARD_DIR}/heap/micropython.cmake)

# The port's frozen modules minus its _boot.py (which formats the whole storage area when
# mounting fails), plus this board's own (modules/).
set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest.py)
