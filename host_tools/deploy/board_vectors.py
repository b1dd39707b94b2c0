"""`pitboss vectors [--port P]`: run every rule vector through the firmware.

Without --port on CPython; with --port on the board itself (the vector files are copied
to its /vectors and checked by pitboss.vectors running there), then compared with
CPython's run: counts per game, every failure, and any case where the two disagree.
"""
import glob
import os

import host_tools
from host_tools.deploy.ready import open_board
from host_tools.output import BoardError, fail
from pitboss import vectors

VECTOR_DIR = os.path.join(host_tools.REPO, "tests", "vectors")


def vector_files():
    return sorted(glob.glob(os.path.join(VECTOR_DIR, "*.vec")))


def _files(games=None):
    files = vector_files()
    if games is not None:
        files = [p for p in files if os.path.basename(p)[:-4] in games]
    return files


def cpython_run(games=None):
    """Every vector file (only `games`' files if given) through the firmware on CPython."""
    fails = []
    tally = vectors.run_files(_files(games), fails.append)
    return tally, [f.replace(VECTOR_DIR + os.sep, "") for f in fails]


def board_run(board, games=None, progress=None):
    """Copy the vector files (only `games`' if given) to the board and run them there.
    With progress (the command's: host_tools.progress.step), the copy shows a bar of
    files and each step is said as it starts."""
    board.exec("import os\ntry:\n os.mkdir('/vectors')\nexcept OSError:\n pass")
    files = _files(games)
    if games is not None:
        # A board's /vectors may hold other games' files from an earlier full run.
        board.exec("import os\nfor f in os.listdir('/vectors'):\n"
                   " if f[:-4] not in %r:\n  os.remove('/vectors/' + f)" % (list(games),))
    from host_tools.progress import bar
    with bar(len(files), "copying vector files", "file", off=progress is None) as shown:
        for path in files:
            with open(path, "rb") as f:
                board.write_file("/vectors/" + os.path.basename(path), f.read())
            shown.update()
    if progress is not None:
        progress("running %d vector files on the board (a minute or two on a Pico)"
                 % len(files))
    out = board.exec("from pitboss import vectors\nvectors.main('/vectors')")
    tally, fails = {}, []
    for line in out.splitlines():
        if line.startswith("GAME "):
            _, game, ok, bad = line.split()
            tally[game] = [int(ok), int(bad)]
        elif line.startswith("FAIL "):
            fails.append(line[5:].replace("/vectors/", ""))
    if not out.rstrip().splitlines()[-1].startswith("VECTORS "):
        raise BoardError("the board's vector run did not finish:\n" + out[-2000:])
    return tally, fails


def compare(host, board):
    """Lines describing every difference and failure; empty means all agree and pass."""
    (ht, hf), (bt, bf) = host, board
    problems = ["board failed: " + f for f in bf]
    problems += ["CPython failed: " + f for f in hf]
    for game in sorted(set(ht) | set(bt)):
        if ht.get(game) != bt.get(game):
            problems.append("%s: CPython %s, board %s" % (game, ht.get(game), bt.get(game)))
    return problems


def cmd_vectors(args):
    from host_tools.progress import step
    host = cpython_run()
    if args.port:
        try:
            with open_board(args.port) as b:
                where, result = "board", board_run(b, progress=step)
        except BoardError as e:
            return fail(e)  # one line, exit 2
    else:
        where, result = "CPython", host
    tally = result[0]
    print("%-22s %7s %7s" % ("game", "passed", "failed"))
    for game in sorted(tally):
        print("%-22s %7d %7d" % (game, tally[game][0], tally[game][1]))
    problems = compare(host, result) if args.port else ["failed: " + f for f in result[1]]
    for p in problems:
        print(p)
    total = sum(t[0] for t in tally.values())
    print("%s: %d vectors passed, %d problems" % (where, total, len(problems)))
    return 1 if problems else 0
