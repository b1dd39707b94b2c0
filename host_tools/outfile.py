"""Output files the host tools write (screenshots, bench figures, plots): checked before
the work that produces them, and never a folder created on the way (issue 29: `demo
--screenshot /nonexistent/x.png` made /nonexistent)."""
import os


def check_out(path, formats=None):
    """None if `path` can be written, else why not (one line). formats: the extensions
    the command can write (".png"): another one is refused rather than written in the
    wrong format under that name."""
    if not path:
        return None
    ext = os.path.splitext(path)[1].lower()
    if formats is not None and ext not in formats:
        return "%s: cannot write %s files (it writes %s)" % (
            path, ext or "extension-less", ", ".join(sorted(formats)))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return "%s: the folder %s does not exist (create it first)" % (path, parent)
    if not os.access(parent, os.W_OK):
        return "%s: the folder %s is not writable" % (path, parent)
    if os.path.isdir(path):
        return "%s is a folder" % path
    return None
