"""host_tools.emu.nor_flash's NOR model, cutting power with tests/powercut_fs.py's PowerCut."""
from host_tools.emu import nor_flash
from powercut_fs import PowerCut


class NorFlash(nor_flash.NorFlash):
    Cut = PowerCut
