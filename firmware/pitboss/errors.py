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


def arg_int(text, what):
    """A command argument that must be an integer (Refused bad_args naming it if not)."""
    try:
        return int(text)
    except (ValueError, TypeError):
        raise Refused("bad_args", "%s must be an integer, got %r" % (what, text))


def arg_one(args, usage):
    """The one argument of a command that takes exactly one."""
    if len(args) != 1:
        raise Refused("bad_args", "usage: " + usage)
    return args[0]
