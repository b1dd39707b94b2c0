"""firmware/manifest.py read as micropython-lib's manifest files are (metadata(),
package(), module()): the list of what a board gets, for host_tools/deploy/flash.py.

A manifest is Python run with these functions in scope; each call adds files:
- module(path, source=False, native=False): one file, path relative to the manifest's
  folder (or base_path);
- package(path, files=None, exclude=(), source=False, native=False): every .py under the
  folder path (or only `files`, relative to it), minus `exclude` (files or folders);
- metadata(**fields): recorded, nothing added;
- game_tables(): the generated table files the games name (Profile.t5/.t2), as package()
  `files` (one per distinct table).
A file added twice is an error, as is a path that does not exist."""
from dataclasses import dataclass
from pathlib import Path


class ManifestError(Exception):
    pass


@dataclass(frozen=True)
class Entry:
    src: Path  # the file on the host
    dest: str  # its path on the board, e.g. "/pitboss/rules/cards.py"
    source: bool = False  # stays a .py (never compiled to .mpy)
    native: bool = False  # native code: compiled for the board's arch, else left off


def game_tables() -> tuple[str, ...]:
    from pitboss.rules import profiles

    return tuple(sorted({getattr(profiles.get(g), a) + ".py" for g in profiles.GAMES
                         for a in ("t5", "t2") if getattr(profiles.get(g), a)}))


def read(path: Path) -> list[Entry]:
    """The entries of the manifest at `path`, sorted by board path."""
    path = Path(path)
    root = path.parent
    entries: dict[str, Entry] = {}
    meta: dict = {}

    def add(src: Path, source: bool, native: bool):
        dest = "/" + src.relative_to(root).as_posix()
        if dest in entries:
            raise ManifestError("%s: %s is added twice" % (path, dest))
        entries[dest] = Entry(src, dest, source, native)

    def module(module_path, base_path=".", source=False, native=False):
        src = root / base_path / module_path
        if not src.is_file():
            raise ManifestError("%s: module(%r): no such file" % (path, module_path))
        add(src, source, native)

    def package(package_path, files=None, base_path=".", exclude=(), source=False,
                native=False):
        top = root / base_path / package_path
        if not top.is_dir():
            raise ManifestError("%s: package(%r): no such folder" % (path, package_path))
        skip = [top / e for e in exclude]
        found = [top / f for f in files] if files is not None else sorted(top.rglob("*.py"))
        for src in found:
            if "__pycache__" in src.parts or any(src == s or s in src.parents for s in skip):
                continue
            if not src.is_file():
                raise ManifestError("%s: package(%r): no file %s" % (path, package_path, src))
            add(src, source, native)

    def metadata(**fields):
        meta.update(fields)

    scope = {"module": module, "package": package, "metadata": metadata,
             "game_tables": game_tables, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    return sorted(entries.values(), key=lambda e: e.dest)
