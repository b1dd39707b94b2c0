"""No module a board runs imports a module MicroPython lacks (the board's files checked
by pyright and mpy-cross: tests/static/test_static_checks.py)."""
import pytest

from tests.support.board_sources import REPO, board_sources as _board_sources


# CPython modules that MicroPython 1.27 does not have on the Pico or the ESP32 (some are
# in the VM's PyScript build, which hides the mistake until it reaches a board). The
# stdlib stubs include a few of them for annotation purposes, so pyright alone misses them.
CPYTHON_ONLY = {"dataclasses", "enum", "typing", "typing_extensions", "itertools", "abc",
                "functools", "contextlib", "pathlib", "importlib", "collections.abc"}


@pytest.mark.parametrize("src", _board_sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_cpython_only_imports(src):
    import ast

    tree = ast.parse(src.read_text(), str(src))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += ["%s (line %d)" % (n, node.lineno) for n in names
                  if n in CPYTHON_ONLY or n.split(".")[0] in CPYTHON_ONLY]
    assert not found, f"{src.relative_to(REPO)} imports CPython-only modules: {found}"
