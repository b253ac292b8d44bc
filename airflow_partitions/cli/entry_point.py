"""The ``airflow-partitions`` command: entry point, global options, store resolution, errors.

Commands live in :mod:`airflow_partitions.cli.commands`, one module per group. Exit codes:
0 ok, 2 bad input (one line on stderr), 1 any other failure (one line; ``--debug`` adds the
traceback). Nothing here imports ``airflow`` at import time: the connection lookup is lazy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import Final, NoReturn

from rich_argparse import RawDescriptionRichHelpFormatter

from airflow_partitions import __version__
from airflow_partitions.cli.base import Context, UsageError, add_global_options
from airflow_partitions.cli.commands import COMMAND_MODULES
from airflow_partitions.defaults import CONNECTION_ID, default_store_url
from airflow_partitions.errors import InvalidInput, PartitionsError
from airflow_partitions.hooks.connection_lookup import find_connection
from airflow_partitions.interop import InvalidConnection, store_url_from_fields
from airflow_partitions.kv import InvalidStoreURL, KVError

PROG: Final = "airflow-partitions"
#: Characters of an error message printed before it is cut (values in it are cut shorter).
MAX_MESSAGE: Final = 1000

EXAMPLES: Final = f"""\
examples:
  {PROG} --store sqlite:///tmp/p.db fact create events --time-column dt
  {PROG} storage create events events_raw --periods HOURLY,DAILY --partition-columns dt,region
  {PROG} partition add events_raw --period HOURLY --range 2015-01-29-06 2015-01-30-00 region=us
  {PROG} timeline show events_raw --json

exit codes: 0 ok, 2 bad input, 1 other failures (store unavailable, corrupt timeline, ...)
"""


class CliParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors become one line (exit 2) instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix(PROG).strip()
        where = f"{command}: " if command else ""
        raise UsageError(f"{where}{message} (see '{self.prog} --help')")


def build_parser() -> CliParser:
    """The full parser: global options, then each command module's subcommands."""
    parser = CliParser(
        prog=PROG,
        description="Manage the partition catalog: facts, storage tables, partitions and their "
                    "timelines.",
        epilog=EXAMPLES,
        formatter_class=RawDescriptionRichHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


# -- store resolution (docs/design.md, "The store") ------------------------------------------------


def airflow_connection_url(conn_id: str = CONNECTION_ID,
                           environ: Mapping[str, str] = os.environ) -> str | None:
    """The store URL of the Airflow connection, or None when there is none (the hook's path:
    :func:`airflow_partitions.hooks.connection_lookup.find_connection`)."""
    fields = find_connection(conn_id, environ)
    if fields is None:
        return None
    return store_url_from_fields(fields.host, fields.port, fields.extra, environ=environ)


def resolve_store_url(explicit: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """``--store``, else the Airflow connection, else ``$AIRFLOW_PARTITIONS_STORE``, else the
    sqlite file under ``$AIRFLOW_HOME``."""
    if explicit:
        return explicit
    return airflow_connection_url() or default_store_url(environ)


# -- running ---------------------------------------------------------------------------------------


def _parse(parser: CliParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse, letting ``COLUMN=VALUE`` words come after options too (argparse alone cannot)."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        if isinstance(getattr(args, "values", None), list) and not any(
            word.startswith("-") for word in extras
        ):  # parse_pairs names a word that is not COLUMN=VALUE
            args.values.extend(extras)
        else:
            prog = getattr(args, "command_prog", PROG)
            command = prog.removeprefix(PROG).strip()
            where = f"{command}: " if command else ""
            raise UsageError(f"{where}unrecognized arguments: {' '.join(extras)} "
                             f"(see '{prog} --help')")
    return args


def _fail(exc: BaseException, code: int, debug: bool, *, unexpected: bool = False) -> int:
    """Print the error as one line (after its traceback with ``--debug``) and return ``code``."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    message = str(exc).replace("\r", " ").replace("\n", " ").strip() or type(exc).__name__
    if len(message) > MAX_MESSAGE:  # a backstop: messages cut what they echo themselves
        message = f"{message[:MAX_MESSAGE]}… (cut from {len(message)} characters)"
    if unexpected:
        message = f"unexpected {type(exc).__name__}: {message}"
        if not debug:
            message += " (rerun with --debug for the traceback)"
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.stderr.flush()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = _parse(build_parser(), argv)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except InvalidInput as exc:
        return _fail(exc, 2, debug)
    ctx: Context | None = None
    try:
        ctx = Context(resolve_store_url(args.store), data_root=args.data_root, debug=args.debug)
        return int(args.handler(args, ctx))
    except (InvalidInput, InvalidStoreURL, InvalidConnection) as exc:
        return _fail(exc, 2, debug)
    except (PartitionsError, KVError) as exc:
        return _fail(exc, 1, debug)
    except BrokenPipeError:  # e.g. `partition list | head`: not an error worth a message
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except Exception as exc:
        return _fail(exc, 1, debug, unexpected=True)
    finally:
        if ctx is not None:
            with contextlib.suppress(Exception):
                ctx.close()


if __name__ == "__main__":
    raise SystemExit(main())
