# What survives a power cut: the filesystem, A/B slots, the journal, meters, tilts, auth.
