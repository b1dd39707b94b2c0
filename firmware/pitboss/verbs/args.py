# A verb's arguments, checked the one way every handler refuses them: Refused("bad_args")
# naming what was wrong, before anything changes.
from pitboss.errors import Refused


def int_arg(text, what):
    try:
        return int(text)
    except (ValueError, TypeError):
        raise Refused("bad_args", "%s must be an integer, got %r"
                                     % (what, text))


def one_arg(args, usage):
    if len(args) != 1:
        raise Refused("bad_args", "usage: " + usage)
    return args[0]
