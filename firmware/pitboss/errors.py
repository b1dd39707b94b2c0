# The one refusal type. Everything the table refuses (a bad card, a wager it does not
# take, a configuration it cannot run, a command line it cannot read) raises Refused:
# `.code` is a stable machine code (docs/protocol.md lists them), the message names the
# culprit. Whatever raised it has changed nothing. Anything else raised inside a command
# is a bug or a fault, never bad input: the controller answers it `internal_error` (or
# `storage_error` for an OSError) and tilts.


class Refused(ValueError):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
