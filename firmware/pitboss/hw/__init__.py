# The table's hardware: the board module, the drivers built from its buses (shoe,
# RFID reader, display), the dealer's display pages and the wall clock.
