# The table's hardware: the shoe (codec, serial, RFID), drivers, the display, the clock.
