"""What the floor's tests share: the firmware in this process behind a line the
collector's puller can use (LocalLine), with hooks that tamper with what the board sends
(the forged, replayed and truncated records a line can carry)."""
import json
import os

from host_tools.table.auth import KeyStore
from host_tools.floor.config import Table
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import plan_round
from host_tools.table.targets import LocalTarget


class LocalLine:
    """A table's protocol line to the firmware in this process: the same commands and
    replies (JSON, through a round trip as on the wire), no pty. `tamper(line, reply)`
    may change a reply before the collector sees it."""

    def __init__(self, target, tamper=None):
        self.target = target
        self.tamper = tamper
        self.sent = []

    async def sync(self, timeout=None):
        return None

    async def request(self, line, timeout=None):
        self.sent.append(line)
        reply = json.loads(json.dumps(self.target.app.ctl.command(line)))
        if self.tamper is not None:
            reply = self.tamper(line, reply)
        return reply

    def close(self):
        pass


def local_table(tmp_path, board="t1", game="nj-3card", seats=3, rounds=2, seed=5):
    """A LocalTarget provisioned under `board` in a key store of its own, configured,
    with `rounds` seeded rounds played: (target, keys)."""
    keys = KeyStore(os.path.join(str(tmp_path), "keys"))
    t = LocalTarget(root=str(tmp_path / ("board-" + board)), durable=False)
    conf = Configurator(t, board, keys)
    conf.provision()
    assert conf.configure(game, seats)["ok"]
    play(t, game, seats, rounds, seed)
    return t, keys


def play(t, game, seats, rounds, seed):
    out = []
    for i in range(rounds):
        replies = t.round(*plan_round(game, seats, seed + i))
        assert all(r.get("ok") for r in replies), replies
        out.append(replies[-1])
    return out


def table(board="t1"):
    return Table(board, "local")


async def direct_db(store):
    """`db(name, *args)` for a Puller, straight on `store` (tests: one thread)."""
    async def call(name, *args, **kw):
        return getattr(store, name)(*args, **kw)
    return call
