# The rule core: cards, rule profiles, paytables, the one evaluator and its fast paths.
