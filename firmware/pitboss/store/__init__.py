# What the table keeps on flash: A/B slots, the journal and its region drivers, meters,
# tilts, keys, the RFID deck map and the firmware's integrity check.
