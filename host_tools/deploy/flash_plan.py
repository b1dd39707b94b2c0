"""What a flash does to a board's files: the plan (copy what differs, remove what the new
firmware does not have), the manifest it writes, and the result it reports.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from host_tools.deploy.mpy_build import SOURCE_ONLY, BuiltFile, counterpart
from pitboss.store import integrity

MANIFEST = integrity.MANIFEST


def manifest_text(files: list[BuiltFile], board: str, mode: str, state: str) -> str:
    return integrity.format_manifest([(f.sha256, f.dest) for f in files], board, mode, state)


def _copy_order(f: BuiltFile):
    # The integrity checker goes first, so a board whose flash stops early can still check
    # itself; main.py goes last, so a new entry point never starts against old modules.
    name = f.dest.rsplit("/", 1)[-1]
    rank = 0 if name.startswith("integrity.") else 2 if f.dest.lstrip("/") in SOURCE_ONLY else 1
    return rank, f.dest


@dataclass
class Plan:
    copy: list[BuiltFile]
    remove: list[str]
    final_manifest: str
    up_to_date: bool


def plan(files: list[BuiltFile], board_hashes: dict[str, str | None],
         old_manifest: str | None, board: str, mode: str,
         board_files: list[str] | None = None) -> Plan:
    """What to do, given the board's actual file hashes and its current manifest.

    Copies every file whose hash on the board differs (missing counts); removes files the
    old manifest listed that the new firmware does not have, the other form (.py/.mpy)
    of every new module where the board has one, and every other code file on the board
    (board_files: its .py/.mpy): the boot check treats any such file as tampering
    (pitboss.store.integrity)."""
    new = {f.dest for f in files}
    copy = sorted((f for f in files if board_hashes.get(f.dest) != f.sha256), key=_copy_order)
    remove = set()
    if old_manifest:
        for _, path in integrity.parse_manifest(old_manifest)[1]:
            if path and path not in new and path != MANIFEST:
                remove.add(path)
    for dest in new:
        other = counterpart(dest)
        if other and other not in new and board_hashes.get(other) is not None:
            remove.add(other)
    for path in board_files or ():
        if path not in new and integrity.is_code(path):
            remove.add(path)
    final = manifest_text(files, board, mode, integrity.COMPLETE)
    return Plan(copy, sorted(remove), final,
                up_to_date=not copy and not remove and old_manifest == final)


@dataclass
class FlashResult:
    board: str
    mode: str
    files: int
    copied: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0
