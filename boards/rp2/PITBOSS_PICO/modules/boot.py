# Frozen on purpose and empty: the port runs boot.py before main.py, and a frozen one is
# found before any file, so a /boot.py on littlefs never runs on the pitboss image (the
# firmware's boot check also tilts when it finds one: pitboss.store.integrity).
