"""The floor: a collector that follows many tables at once over their protocol lines
into one database (SQLite or PostgreSQL), the queries a pit needs, and the pit view in
the browser (docs/floor.md).

One job a module:

| module | job |
|---|---|
| `config` | the floor's tables, database, shifts and web address (TOML or the command line) |
| `link` | one table's protocol line on asyncio (a serial port, a kept board's pty) |
| `records` | the checks an exported record must pass (CRC, MAC, seq) before it is stored |
| `puller` | one table followed: status, export, store, then acknowledge; backoff when off the line |
| `store` | the schema's migrations (SQL files in `migrations/`) and every write, in transactions |
| `backends` | SQLite (stdlib, WAL) and PostgreSQL (psycopg 3) behind one interface |
| `ingest` | what a stored record adds: rounds, tilts, configurations |
| `queries` | per table and shift: rounds, drop, paid, hold, tilts, voids; round recall; CSV |
| `collector` | the long-running service: every table's puller, the pit view, on one event loop |
| `web` | the pit view (Starlette on uvicorn): grid, table, round; live by server-sent events |
| `cli` | `pitboss collect` and `pitboss floor ...` |
| `simfloor` | many tables for load and failure tests: the real firmware on CPython behind ptys |
| `procs` | a floor run as processes (simulators, the collector), kill -9, the truth from flash |
| `demo` | `./dev demo`'s last step: the collector on the demo's board, the floor summary |
| `bench` | the database side of a 1,000-table floor, measured with generated records |
"""
