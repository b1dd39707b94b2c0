# Generated fast-path tables (host_tools/gentables.py), one module per distinct table.
