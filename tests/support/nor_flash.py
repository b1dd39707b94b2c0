"""host_tools.emu.nor_flash's NOR model, cutting power with tests/support/powercut_fs.py's PowerCut."""
from host_tools.emu import nor_flash
from tests.support.powercut_fs import PowerCut


class NorFlash(nor_flash.NorFlash):
    Cut = PowerCut
