"""The house's layout: docs/architecture.md lists every module with its job (and nothing
that is gone), and the import graph has the shape it promises: no cycles, firmware/
never imports host_tools/ or boards/, boards/ imports no firmware, and nothing a board
gets (firmware/manifest.py) imports a module the board does not get."""
import ast
import re
from pathlib import Path

from host_tools.deploy import manifest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
ROOTS = {"firmware": REPO / "firmware", "boards": REPO, "host_tools": REPO}


def _files():
    out = [p for p in (REPO / "firmware").rglob("*.py")]
    out += list((REPO / "boards").glob("*.py"))
    out += [p for p in (REPO / "host_tools").rglob("*") if p.suffix in (".py", ".mjs")]
    return sorted(p for p in out if "__pycache__" not in p.parts and "_tree" not in p.parts)


def _listed():
    text = DOC.read_text()
    return set(re.findall(r"^\| `((?:firmware|boards|host_tools)/[^`]+\.(?:py|mjs))` \|", text,
                          re.M))


def test_every_module_is_listed_with_its_job_and_none_that_is_gone():
    listed = _listed()
    patterns = [re.compile("^" + re.escape(x).replace(re.escape("<hash>"), "[0-9a-f]+") + "$")
                for x in listed]
    have = [p.relative_to(REPO).as_posix() for p in _files()]
    missing = [h for h in have if not any(r.match(h) for r in patterns)]
    gone = [x for x, r in zip(listed, patterns) if not any(r.match(h) for h in have)]
    assert not missing, "modules docs/architecture.md does not list: %s" % missing
    assert not gone, "docs/architecture.md lists modules that are gone: %s" % gone


def _module(path):
    rel = path.relative_to(REPO).as_posix()
    if rel.startswith("firmware/"):
        rel = rel[len("firmware/"):]
    name = rel[:-3].replace("/", ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def _graph():
    """module -> the project modules it imports (anywhere in the file, functions too)."""
    mods = {_module(p): p for p in _files() if p.suffix == ".py"}
    graph = {}
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [base + "." + a.name if base + "." + a.name in mods else base
                           for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):
                    deps.add(t)  # (a module's own package is imported with it)
        graph[name] = deps
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_layers_point_one_way():
    g = _graph()
    bad = [(m, d) for m, deps in g.items() for d in deps
           if (m.startswith("pitboss") and d.split(".")[0] in ("host_tools", "boards"))
           or (m.startswith("boards") and d.startswith("pitboss"))]
    assert bad == []


def test_nothing_a_board_gets_imports_what_it_does_not_get():
    entries = manifest.read(REPO / "firmware" / "manifest.py")
    on_board = {_module(e.src) for e in entries}
    g = _graph()
    bad = [(m, d) for m in on_board for d in g.get(m, ()) if d not in on_board]
    assert bad == []
    # and the host-only modules stay off it
    assert not any(m.startswith(("host_tools", "boards")) for m in on_board)


# Host modules still over 500 lines, with their length now: issue 28 item 4 splits them
# into packages by job. A ratchet: none of them may grow, and no other file may pass 500.
_HOST_OVER = {"host_tools/table/host.py": 949, "host_tools/deploy/flash.py": 794,
              "host_tools/emu/vboard.py": 676, "host_tools/bench/board.py": 624}


def test_no_file_over_500_lines():
    """Issue 28: small named pieces. Firmware and host modules stay under 500 lines
    (the generated tables aside: rules/tables/)."""
    long = []
    for p in _files():
        rel = p.relative_to(REPO).as_posix()
        if "/tables/" in rel or not rel.endswith(".py"):
            continue
        n = len(p.read_text().splitlines())
        if n > _HOST_OVER.get(rel, 500):
            long.append("%s (%d)" % (rel, n))
    assert not long, "over 500 lines: %s" % ", ".join(long)
