# The FROZEN variant (mpconfigvariant_FROZEN.cmake): the image's own modules plus the
# table firmware, frozen (firmware/pitboss without the host-only sim.py, and
# boards/pico.py as `pico`, which variant_frozen/board.py re-exports as `board`).
# pitboss_frozen tells pitboss_program.check() that the code is in the core (@core).
import os

include("$(BOARD_DIR)/manifest.py")
_fw = os.path.abspath(os.path.join("..", "..", "..", "firmware"))  # cwd: this folder
_files = []
for _d, _, _names in os.walk(os.path.join(_fw, "pitboss")):
    for _n in _names:
        _rel = os.path.relpath(os.path.join(_d, _n), _fw)
        if _n.endswith(".py") and _rel != os.path.join("pitboss", "sim.py"):
            _files.append(os.path.relpath(_rel, "pitboss"))
package("pitboss", files=sorted(_files), base_path=_fw)
module("pico.py", base_path=os.path.join(os.path.dirname(_fw), "boards"))
freeze("$(BOARD_DIR)/variant_frozen")
