# What the pitboss image freezes: the rp2 port's own manifest (boards/manifest.py) minus
# its _boot.py (mounts littlefs on the whole storage area and FORMATS it when mounting
# fails: here that area also holds the raw journal region), plus this board's modules/:
# _boot.py (littlefs on its part only), boot.py and main.py (frozen, so no file on
# littlefs can take their place), pitboss_layout.py (the flash layout).
freeze("$(PORT_DIR)/modules", "rp2.py")
include("$(MPY_DIR)/extmod/asyncio")
require("onewire")
require("ds18x20")
require("dht")
require("neopixel")
freeze("$(BOARD_DIR)/modules")
