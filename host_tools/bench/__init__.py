"""`pitboss bench`: the evaluator's figures on CPython and on boards, and the board
scripts the figures are measured with."""
