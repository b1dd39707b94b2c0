"""firmware/manifest.py read on the host: what a board gets, as (source, board path) pairs.

The manifest is written in MicroPython's vocabulary (tools/manifestfile.py: `module()`,
`package()`, `include()`, `options`), so the same file can be included by an image's
frozen manifest; this reader implements the part of it the copy-to-flash path needs and
refuses the rest by name (`freeze()`, `require()`: an image's business, not a copy's).
"""
from __future__ import annotations

import os
from pathlib import Path


class ManifestError(ValueError):
    pass


class _Options:
    def __init__(self, **kwargs):
        self._kwargs, self._defaults = kwargs, {}

    def defaults(self, **kwargs):
        self._defaults = kwargs

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._kwargs.get(name, self._defaults.get(name))


def read(path, **options) -> list[tuple[Path, str]]:
    """(source file, board path such as "pitboss/rules/cards.py") for every file the
    manifest at `path` lists, in its order, each once."""
    out: dict[str, Path] = {}
    _run(Path(path), out, options)
    return [(src, dest) for dest, src in out.items()]


def _run(path: Path, out: dict, options: dict):
    here = path.parent

    def base(base_path):
        return (here / base_path).resolve()

    def add(src: Path, dest: str):
        if not src.is_file():
            raise ManifestError("%s: no file %s" % (path, src))
        out.setdefault(dest, src)

    def module(module_path, base_path=".", opt=None):
        if not module_path.endswith(".py"):
            raise ManifestError("%s: module(%r) must name a .py file" % (path, module_path))
        add(base(base_path) / module_path, module_path)

    def package(package_path, files=None, base_path=".", opt=None):
        root = base(base_path)
        if files is not None:
            for f in files:
                add(root / package_path / f, "%s/%s" % (package_path, f))
            return
        top = root / package_path
        if not top.is_dir():
            raise ManifestError("%s: no package folder %s" % (path, top))
        for dirpath, dirnames, names in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for n in sorted(names):
                if n.endswith(".py"):
                    src = Path(dirpath) / n
                    add(src, src.relative_to(root).as_posix())

    def include(manifest_path, **kwargs):
        p = base(manifest_path)
        _run(p / "manifest.py" if p.is_dir() else p, out, kwargs)

    def refused(name):
        def f(*a, **k):
            raise ManifestError("%s: %s() is for an image's frozen manifest, not a board's "
                                "files" % (path, name))
        return f

    env = {"module": module, "package": package, "include": include,
           "options": _Options(**options), "freeze": refused("freeze"),
           "require": refused("require"), "metadata": lambda **k: None,
           "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), env)
