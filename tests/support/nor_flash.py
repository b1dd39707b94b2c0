"""host_tools.nor_flash's NOR model, cutting power with tests/powercut_fs.py's PowerCut."""
from host_tools import nor_flash
from tests.support.powercut_fs import PowerCut


class NorFlash(nor_flash.NorFlash):
    Cut = PowerCut
