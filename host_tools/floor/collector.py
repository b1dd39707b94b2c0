"""`pitboss collect`: the long-running service. One asyncio event loop follows every
table of the configuration (host_tools.floor.puller), writes through one database thread
(the Store is not shared between threads: SQLite's writer and psycopg's connection each
live on their own), and serves the pit view (host_tools.floor.web) from the same loop.
"""
import asyncio
import concurrent.futures
import contextlib
import logging
import os
import signal

from host_tools.floor.backends import DatabaseError
from host_tools.floor.puller import Puller
from host_tools.floor.store import Store
from host_tools.table.auth import KeyStore

log = logging.getLogger("pitboss.floor")


class DB:
    """A Store on a thread of its own: `await db("method", *args)`."""

    def __init__(self, url, migrate=False):
        self.url = url
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="floor-db")
        self.store = self.pool.submit(Store, url).result()
        if migrate:
            self.pool.submit(self.store.migrate).result()

    def _call(self, name, args, kw):
        if self.store is None:  # the connection was lost: a new one (the server is back)
            self.store = Store(self.url)
        try:
            return getattr(self.store, name)(*args, **kw)
        except self.store.db.Error as e:
            # The database failed (a PostgreSQL server restarted, a disk full): this
            # transaction rolled back, nothing was acknowledged; the next call reconnects
            # and the table's puller tries again after its backoff.
            try:
                self.store.close()
            except Exception:  # noqa: BLE001  (a connection already gone)
                pass
            self.store = None
            raise DatabaseError("database: %s" % str(e).strip().splitlines()[0]) from e

    async def __call__(self, name, *args, **kw):
        return await asyncio.get_running_loop().run_in_executor(
            self.pool, self._call, name, args, kw)

    def run(self, fn, *args):
        """A function of the store (queries.*) on this thread."""
        return asyncio.get_running_loop().run_in_executor(
            self.pool, lambda: fn(self.store or self._reopen(), *args))

    def _reopen(self):
        self.store = Store(self.url)
        return self.store

    def close(self):
        if self.store is not None:
            self.pool.submit(self.store.close).result()
        self.pool.shutdown()


class Collector:
    def __init__(self, config, opener=None, set_clock=True):
        self.config = config
        self.opener = opener
        self.set_clock = set_clock
        self.changed = asyncio.Event()  # set when anything the pit view shows moved
        self.version = 0
        self.pullers = []
        self.server = None

    def notify(self):
        self.version += 1
        self.changed.set()

    async def run(self, seconds=None, ready=None, until=None):
        """Follow every table until stopped (SIGTERM, SIGINT), for `seconds`, or until
        `until()` is true (checked every 0.2 s)."""
        self.writer = DB(self.config.db, migrate=True)
        # The pit view reads on a connection of its own (WAL: readers never wait for the
        # writer), so a slow page never holds a table's acknowledgement back.
        self.reader = DB(self.config.db)
        keys = KeyStore(self.config.keys) if self.config.keys else KeyStore()
        self.pullers = [Puller(t, self.writer, keys, poll=self.config.poll,
                               backoff_max=self.config.backoff_max, opener=self.opener,
                               notify=self.notify, set_clock=self.set_clock)
                        for t in self.config.tables]
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, stop.set)
            except (NotImplementedError, RuntimeError):
                pass
        tasks = [asyncio.create_task(p.run(), name="table-%s" % p.board)
                 for p in self.pullers]
        web = None
        if self.config.http:
            web = asyncio.create_task(self._serve_web(), name="pit-view")
        if ready is not None:
            ready()
        if until is not None:
            async def watch():
                while not until():
                    await asyncio.sleep(0.2)
                stop.set()
            watcher = asyncio.create_task(watch())
        try:
            if seconds is None:
                await stop.wait()
            else:
                try:
                    await asyncio.wait_for(stop.wait(), seconds)
                except asyncio.TimeoutError:
                    pass
        finally:
            if until is not None:
                watcher.cancel()
            for p in self.pullers:
                p.stop()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.server is not None:
                self.server.should_exit = True
            if web is not None:
                await asyncio.gather(web, return_exceptions=True)
            self.writer.close()
            self.reader.close()

    async def _serve_web(self):
        import uvicorn

        from host_tools.floor.web import make_app

        host, _, port = self.config.http.rpartition(":")
        app = make_app(self.reader, self.config, self)
        cfg = uvicorn.Config(app, host=host or "127.0.0.1", port=int(port),
                             log_level="warning", lifespan="off")
        self.server = uvicorn.Server(cfg)
        # The collector handles SIGTERM/SIGINT itself (it stops every table first).
        self.server.capture_signals = contextlib.nullcontext
        log.info("pit view on http://%s/", self.config.http)
        await self.server.serve()


def run(config, seconds=None):
    logging.basicConfig(level=os.environ.get("PITBOSS_LOG", "INFO"),
                        format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    c = Collector(config)
    asyncio.run(c.run(seconds))
    return c
