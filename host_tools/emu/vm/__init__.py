"""The MicroPython 1.27 WebAssembly VM, run by Node: pitboss's virtual board.

- ``run_script``: run one script in a fresh VM (script mode, see run.mjs).
- ``ensure_node_modules``: install the pinned npm package if it is missing.
"""
from .runner import (VMError, VMResult, ensure_node_modules, find_node, repo_root,
                     run_script)

__all__ = ["VMError", "VMResult", "ensure_node_modules", "find_node", "repo_root",
           "run_script"]
