"""Defaults a bench technician sets once: ~/.config/pitboss/config.toml (or
$PITBOSS_CONFIG), read with tomllib. Every key is optional; the environment and the
command line come first:

    port = "/dev/ttyACM0"      # --port, else $PITBOSS_PORT, else this
    board_id = "table1"        # --board-id, else $PITBOSS_BOARD, else this
    keys = "~/pitboss/keys"    # --keys, else $PITBOSS_KEYS, else this, else $PITBOSS_HOME/keys
    export_store = "~/exports" # export --store, else this, else $PITBOSS_HOME/export
"""
import os
import tomllib

KEYS = ("port", "board_id", "keys", "export_store")


class SettingsError(ValueError):
    pass


def path():
    return os.environ.get("PITBOSS_CONFIG") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"),
        "pitboss", "config.toml")


def load():
    """{key: value} from the config file ({} if there is none); SettingsError (one line)
    for a file that is not TOML or holds a key this tool does not know."""
    p = path()
    try:
        with open(p, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SettingsError("%s: %s" % (p, e))
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise SettingsError("%s: unknown setting %s (known: %s)"
                            % (p, ", ".join(unknown), ", ".join(KEYS)))
    for k, v in data.items():
        if not isinstance(v, str) or not v:
            raise SettingsError("%s: %s must be a non-empty string" % (p, k))
    return {k: os.path.expanduser(v) if k in ("keys", "export_store") else v
            for k, v in data.items()}


def apply(args, settings):
    """Fill what the command line left unset: environment first, then the file."""
    env = {"port": "PITBOSS_PORT", "board_id": "PITBOSS_BOARD", "keys": "PITBOSS_KEYS"}
    for key in ("port", "board_id", "keys"):
        if hasattr(args, key) and getattr(args, key) is None:
            setattr(args, key, os.environ.get(env[key]) or settings.get(key))
    if hasattr(args, "store") and getattr(args, "store", None) is None:
        args.store = settings.get("export_store")
