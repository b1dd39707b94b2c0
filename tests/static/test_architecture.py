"""Issue 28's house rules, checked over the source (no board needed):

- docs/architecture.md lists every module with its one job: a module missing from it,
  or listed there but gone, fails;
- the import graph of firmware/, host_tools/ and boards/ has no cycle (an import inside a
  function counts: it is still a dependency), firmware/ never imports host_tools or
  boards, boards/ never imports the firmware, and nothing a board gets
  (firmware/manifest.py) imports the host-only simulation room (pitboss.sim), directly or
  through another module;
- no firmware or host file is over 500 lines, generated tables aside.
"""
import ast
import fnmatch
import re
from pathlib import Path

from host_tools import manifest

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
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert len(_listed()) > 60
