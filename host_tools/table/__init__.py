"""Driving a table: the host's key store, the targets a table is driven through, seeded
rounds, authenticated configuration, the table commands and the journal's export."""
