# Imported by /main.py at boot: start the table controller's main loop.
from pitboss.app import main

main()
