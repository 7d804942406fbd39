"""The `wavetune` command. Each package contributes its subcommands through a `register(subparsers)`
function in its own `cli` module, so the command grows with the packages without one big file."""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that add subcommands, in the order `wavetune --help` lists them.
COMMAND_MODULES = ("wavetune.demo", "hwspecs.cli", "wavetune.predict", "wavesim.cli", "tuner.cli", "validation.cli",
                   "validation.trace")
# Which module owns a command: `wavetune predict ...` imports only wavetune.predict, so a batch job
# does not pay for importing every package (a test checks this map against the modules).
COMMAND_OWNER = {"specs": "hwspecs.cli", "predict": "wavetune.predict", "simulate": "wavesim.cli",
                 "sweep": "wavesim.cli", "calibrate": "wavesim.cli", "tune": "tuner.cli", "select": "tuner.cli",
                 "export": "tuner.cli", "tune-eval": "tuner.cli", "demo": "wavetune.demo", "profile": "validation.cli",
                 "validate": "validation.cli", "staircase": "validation.cli",
                 "trace": "validation.trace", "trace-report": "validation.trace"}


class CLIError(Exception):
    """A user-facing error: printed as one line on stderr, exit status 2."""


def build_parser(modules=COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wavetune", description=__doc__.split("\n")[0])
    from wavetune import __version__

    parser.add_argument("--version", action="version", version=f"wavetune {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:  # the package has no commands yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    owner = COMMAND_OWNER.get(argv[0]) if argv else None
    parser = build_parser((owner,) if owner else COMMAND_MODULES)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `wavetune specs list | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0
    except (CLIError, ValueError, KeyError, OSError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"wavetune {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
