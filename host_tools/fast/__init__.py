"""Rules on the host: the precomputed tables (tables/*.bin) behind the host's score(),
the census of every hand and the house edge of every wager."""
