"""Issue 28's house rules, checked over the source (no board needed):

- docs/architecture.md lists every module with its one job: a module missing from it,
  or listed there but gone, fails;
- the import graph of firmware/, host_tools/ and boards/ has no cycle (an import inside a
  function counts: it is still a dependency), firmware/ never imports host_tools or
  boards, boards/ never imports the firmware, and nothing a board gets
  (firmware/manifest.py) imports the host-only simulation room (pitboss.sim), directly or
  through another module;
- no firmware or host file is over 500 lines, generated tables aside;
- host_tools is packages by job (fast, emu, link, deploy, table, then bench, proofs and
  floor) under the command's own modules; each of the product's packages imports only
  the ones before it in that list, never the benchmarks, proofs, floor or command line;
- no host module changes sys.path (the packages are declared in pyproject.toml), board
  scripts and the entry point aside;
- `pitboss`'s subcommands are the one command table's (host_tools.commands).
"""
import ast
import fnmatch
import re
from pathlib import Path

from host_tools.deploy import manifest

REPO = Path(__file__).resolve().parents[2]
ARCH = REPO / "docs" / "architecture.md"
LIMIT = 500
GENERATED = ("firmware/pitboss/rules/tables/t5_*.py", "firmware/pitboss/rules/tables/t2_*.py")


def _sources():
    """Every Python module of the three trees, as repository-relative paths."""
    out = []
    for top in ("firmware", "host_tools", "boards"):
        for p in sorted((REPO / top).rglob("*.py")):
            rel = p.relative_to(REPO).as_posix()
            if "__pycache__" in rel or rel.startswith("boards/rp2/") or "/_tree/" in rel:
                continue
            out.append(rel)
    return out


def _module_name(rel):
    """firmware/pitboss/rules/cards.py -> pitboss.rules.cards; host_tools/x.py ->
    host_tools.x; a package's __init__ is the package."""
    parts = rel[:-3].split("/")
    if parts[0] == "firmware":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _graph():
    mods = {_module_name(r): r for r in _sources() if r != "firmware/manifest.py"}
    graph = {}
    for name, rel in mods.items():
        tree = ast.parse((REPO / rel).read_text(), rel)
        pkg = name if rel.endswith("__init__.py") else name.rpartition(".")[0]
        wanted = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                wanted.update(a.name for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - (n.level - 1)]
                    base = ".".join(up + ([n.module] if n.module else []))
                wanted.add(base)
                wanted.update(base + "." + a.name for a in n.names)
        deps = set()
        for w in wanted:
            while w and w not in mods:  # a name from a module: the module itself
                w = w.rpartition(".")[0]
            if w and w != name:
                deps.add(w)
        graph[name] = deps
    return graph


def _cycles(graph):
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_anywhere():
    assert _cycles(_graph()) == []


def test_the_layers_import_only_downwards():
    bad = []
    for name, deps in _graph().items():
        for d in deps:
            if name.startswith("pitboss") and d.startswith(("host_tools", "boards")):
                bad.append("%s imports %s (firmware never imports the host or boards)"
                           % (name, d))
            if name.startswith("boards") and d.startswith("pitboss"):
                bad.append("%s imports %s (a board gives buses and budgets; "
                           "pitboss.hw.board builds the drivers)" % (name, d))
    assert bad == []


def test_nothing_a_board_gets_imports_the_simulation_room():
    graph = _graph()
    board = {_module_name("firmware/" + dest) for _, dest in
             manifest.read(REPO / "firmware" / "manifest.py")}
    assert board and not any(m.startswith("pitboss.sim") for m in board)
    seen, todo, why = set(), sorted(board), {}
    while todo:
        m = todo.pop()
        if m in seen or m not in graph:
            continue
        seen.add(m)
        for d in graph[m]:
            why.setdefault(d, m)
            todo.append(d)
    host_only = sorted(m for m in seen if m.startswith(("pitboss.sim", "host_tools")))
    assert host_only == [], ["%s (imported by %s)" % (m, why.get(m)) for m in host_only]


def _listed():
    """Every backticked module path in the first cell of a table row of the doc."""
    out = set()
    for line in ARCH.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        out.update(re.findall(r"`([^`]+\.py)`", first))
    return out


def test_the_architecture_doc_lists_every_module_and_only_those():
    listed = _listed()
    real = set(_sources())
    patterns = [p for p in listed if "<" in p]
    plain = listed - set(patterns)
    globbed = [re.sub(r"<[^>]+>", "*", p) for p in patterns]
    covered = {r for r in real if any(fnmatch.fnmatch(r, g) for g in globbed)}
    missing = sorted(real - plain - covered)
    gone = sorted(p for p in plain if p not in real)
    assert not missing, "modules docs/architecture.md does not list: %s" % missing
    assert not gone, "docs/architecture.md lists modules that do not exist: %s" % gone
    for g in globbed:
        assert any(fnmatch.fnmatch(r, g) for r in real), "%s matches no module" % g


def test_no_file_over_500_lines():
    over = {}
    for rel in _sources():
        if any(fnmatch.fnmatch(rel, g) for g in GENERATED):
            continue
        n = len((REPO / rel).read_text().splitlines())
        if n > LIMIT:
            over[rel] = n
    assert over == {}, "over %d lines (split by job): %s" % (LIMIT, over)


def test_the_checks_see_what_they_check():
    # The graph has the layers' edges the rules above rely on, so an empty or broken
    # walk cannot pass them by finding nothing.
    g = _graph()
    assert "pitboss.verbs" in g["pitboss.controller"]
    assert "pitboss.store.journal" in g["pitboss.controller"]
    assert "pitboss.app" in g["pitboss.loop"]
    assert "pitboss.hw.board" in g["pitboss.app"]
    assert any(d.startswith("host_tools") for d in g["host_tools.cli"])
    assert "host_tools.link.portlock" in g["host_tools.link.protolink"]
    assert _job("host_tools.link.ports") == "link" and _job("host_tools.cli") is None
    assert _job("host_tools.floor") == "floor" and _job("host_tools.emu.vm.runner") == "emu"
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert len(_listed()) > 60


# ---- host_tools: packages by job -----------------------------------------------------------

TOP = {"__init__", "__main__", "cli", "commands", "argtypes", "output", "settings",
       "progress", "outfile", "demo"}  # the command and its conventions
JOBS = ("link", "emu", "deploy", "table", "fast", "bench", "proofs", "floor")
# What the commands are made of, in layers: the host's rules stand alone, then the
# emulated boards, the links to a board (a port may name an emulated one), the deploy,
# and driving a table. bench, proofs and floor use them; they never use those.
PRODUCT = ("fast", "emu", "link", "deploy", "table")
# Run by path on a board or under MicroPython, or the entry point: their own sys.path.
OWN_PATH = {"host_tools/__main__.py", "host_tools/bench/bench_board.py",
            "host_tools/bench/bench_board_kit.py", "host_tools/bench/bench_card.py"}


def _job(module):
    """host_tools.link.ports -> 'link'; host_tools.cli -> None (the top)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or parts[1:] and parts[1] in JOBS else None


def test_the_host_tools_are_packages_by_job():
    loose = []
    for rel in _sources():
        parts = rel[:-3].split("/")
        if parts[0] != "host_tools":
            continue
        if len(parts) == 2 and parts[1] not in TOP:
            loose.append(rel)
        if len(parts) > 2 and parts[1] not in JOBS:
            loose.append(rel)
    assert loose == [], "host modules outside the packages by job: %s" % loose
    for job in JOBS:
        assert (REPO / "host_tools" / job / "__init__.py").is_file(), job


def test_the_host_packages_import_only_downwards():
    # The product's packages in layers: each imports only the ones before it (and the
    # command's conventions at the top); bench, proofs and floor use them, never the
    # other way round, and nothing below the command imports the command line itself.
    bad = []
    for name, deps in _graph().items():
        job = _job(name) if name.startswith("host_tools.") else None
        if job not in PRODUCT:
            continue
        for d in deps:
            if not d.startswith("host_tools"):
                continue
            dj = _job(d)
            if d in ("host_tools.cli", "host_tools.demo"):
                bad.append("%s imports the command line (%s)" % (name, d))
            elif dj is not None and dj != job and (
                    dj not in PRODUCT or PRODUCT.index(dj) > PRODUCT.index(job)):
                bad.append("%s (%s) imports %s (%s)" % (name, job, d, dj))
    assert bad == []


def _changes_sys_path(tree):
    """Where a module's code assigns to or mutates sys.path (strings of code aside)."""
    hits = []
    for n in ast.walk(tree):
        target = None
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            target = n.func.value
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                target = t.value if isinstance(t, ast.Subscript) else t
        if (isinstance(target, ast.Attribute) and target.attr == "path"
                and isinstance(target.value, ast.Name) and target.value.id == "sys"):
            hits.append(n.lineno)
    return hits


def test_no_host_module_changes_sys_path():
    bad = {}
    for rel in _sources():
        if rel.startswith("host_tools/") and rel not in OWN_PATH:
            hits = _changes_sys_path(ast.parse((REPO / rel).read_text(), rel))
            if hits:
                bad[rel] = hits
    assert bad == {}, "sys.path changed by (declare the package in pyproject.toml): %s" % bad
    assert _changes_sys_path(ast.parse("import sys\nsys.path.insert(0, 'x')\n"))
    assert _changes_sys_path(ast.parse("import sys\nsys.path[:0] = ['x']\n"))


def test_the_subcommands_are_the_command_table():
    from host_tools import commands
    from host_tools.cli import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(commands.COMMANDS)
