# Generated five- and two-card tables (host_tools/gentables.py), one module per distinct
# table, named by its content; the evaluator loads one when its game first ranks a hand
# and drops the module (rules/evaluator.py _load).
