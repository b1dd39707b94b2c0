# What a board gets, in micropython-lib's manifest vocabulary (package(), module()). The
# host reads it (host_tools/deploy/manifest.py) to copy files to a board's flash today; an image
# (ROMFS or frozen modules) would be built from the same list. Paths are relative to
# firmware/. The board definition (boards/<name>.py as /board.py) is added per board.
# Options: source=True stays a .py on the board (the interpreter runs /main.py by that
# name); native=True holds @micropython.native/viper code, compiled for the board's arch
# and left off boards without a native emitter (the firmware keeps its bytecode path).
# (package(), module(), metadata() and game_tables() are given by the reader.)
# pyright: reportUndefinedVariable=false
metadata(description="pitboss table controller firmware", version="0.1.0")

module("main.py", source=True)
package("pitboss", exclude=("rules/native5.py", "rules/tables"))
module("pitboss/rules/native5.py", native=True)
# Generated tables (host_tools/fast/gentables.py): each distinct table a game names, once.
package("pitboss/rules/tables", files=("__init__.py",) + game_tables())
