# Marker of the FROZEN variant: the table firmware is frozen into the core, so
# pitboss_program.check() has no ROMFS to check before it runs.
