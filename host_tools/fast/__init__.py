"""The host's fast path: precomputed tables built from the rule core (gentables.py,
into tables/ and firmware/pitboss/rules/tables/) and the host's score/best from them
(hostfast.py, installed explicitly)."""
