# The release variant measured beside the ROMFS image (build.sh --variant FROZEN): the
# table firmware frozen into the core itself (firmware/pitboss, boards/pico.py as
# `board`), so its bytecode and names live in flash with no ROMFS deploy; a code change
# then needs a new image. Same flash layout (pitboss_layout.py): the core area is 640 KB.
set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest_frozen.py)
