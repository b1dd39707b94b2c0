# The FROZEN variant (mpconfigvariant_FROZEN.cmake): the image's own modules plus the
# table firmware, frozen: what firmware/manifest.py gives a board (main=False: the image
# freezes its own main.py), and boards/pico.py as `pico`, which variant_frozen/board.py
# re-exports as `board`. pitboss_frozen tells pitboss_program.check() that the code is in
# the core (@core).
include("$(BOARD_DIR)/manifest.py")
include("$(BOARD_DIR)/../../../firmware/manifest.py", main=False)
module("pico.py", base_path="$(BOARD_DIR)/../../../boards")
freeze("$(BOARD_DIR)/variant_frozen")
