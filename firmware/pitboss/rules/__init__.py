# The rules as the texts word them: cards, the one evaluator and its native path, the
# rule profiles (what differs between jurisdictions), posted paytables, generated tables.
