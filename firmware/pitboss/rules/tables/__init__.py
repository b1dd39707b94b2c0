# Generated fast-path tables (host_tools/fast/gentables.py), one module per distinct table.
