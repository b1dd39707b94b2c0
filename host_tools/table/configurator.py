"""Authenticated configuration for one board: the commands signed with its key from the
host's key store (host_tools.table.auth), sent through any target (host_tools.table.targets).
"""
import json

from host_tools.table.auth import KeyStore, fingerprint


class Configurator:
    """Authenticated configuration for one board: its key in the host's key store."""

    def __init__(self, target, board_id, keys=None):
        self.target = target
        self.board_id = board_id
        self.keys = keys or KeyStore()

    def provision(self, force=True):
        key = self.keys.provision(self.board_id, force=force)
        self.target.provision(key)
        return fingerprint(key)

    def signed(self, command):
        line = self.keys.sign(self.board_id, command)
        return self.target.commands([line])[0]

    def configure(self, game, seats, extra=None):
        cfg = dict(extra or {}, game=game, seats=seats)
        return self.signed("config " + json.dumps(cfg, separators=(",", ":")))
