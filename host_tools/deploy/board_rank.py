"""`pitboss rank --port P`: rank on the board, through the firmware's own protocol.

The output is the same JSON as ranking on CPython: the board answers with the reply of
pitboss.verbs.rank.rank_reply, and the host only reorders keys for printing.
"""
import sys

from host_tools.deploy.ready import open_board
from host_tools.output import EXIT_REFUSED, BoardError, emit, fail, say_failed

_FIELDS = ("game", "cards", "category", "score", "hand")
CHUNK = 100  # lines per raw-REPL exec: keeps each paste small for slow USB boards


def rank_lines(board, game, hands, best=False):
    """Replies (dicts) for hands (card strings), in order, computed on the board."""
    verb = "best" if best else "rank"
    out = []
    for i in range(0, len(hands), CHUNK):
        cmds = ["%s %s %s" % (verb, game, h) for h in hands[i:i + CHUNK]]
        out += board.call_lines("from pitboss import verbs\nverbs.batch(%r)" % cmds)
    return out


def as_printed(reply, line=None):
    if reply.get("ok"):
        return {k: reply[k] for k in _FIELDS}
    err = reply["error"]
    obj = {"error": err["message"], "kind": err["code"]}
    if line is not None:
        obj["line"] = line
    return obj


def rank_on_board(args):
    if args.batch:
        numbered = [(n, ln.strip()) for n, ln in enumerate(sys.stdin, 1) if ln.strip()]
    else:
        numbered = [(None, " ".join(args.cards))]
    try:
        with open_board(args.port) as board:
            replies = rank_lines(board, args.game, [h for _, h in numbered], args.best)
    except BoardError as e:
        return fail(e)  # one line, exit 2
    refused = 0
    for (n, _), reply in zip(numbered, replies):
        obj = as_printed(reply, n)
        if "error" in obj:
            if not args.batch:
                return say_failed(obj["error"])
            refused += 1
        emit(obj)
    return EXIT_REFUSED if refused else 0  # --batch: every line answered
