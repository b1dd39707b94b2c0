"""Proofs run on demand: no shoe byte lost to a flash write (simulated and on the
emulated Pico), issue 11's seeded rounds through the UART, no foul in a house way."""
