"""What every command module shares: the run context, parser helpers and output helpers.

Kept apart from :mod:`airflow_partitions.cli.entry_point` so that command modules never import
the entry point (which imports them).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Final, TypeAlias

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich_argparse import RawDescriptionRichHelpFormatter

from airflow_partitions.catalog import Catalog
from airflow_partitions.cli.console import console_for
from airflow_partitions.errors import InvalidInput

SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class UsageError(InvalidInput):
    """Bad command-line input found by the CLI itself (exit code 2)."""


@dataclass
class Context:
    """Per-invocation state; the catalog opens lazily so ``--help``-like paths never touch it."""

    store_url: str
    data_root: str | None = None
    debug: bool = False
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    _catalog: Catalog | None = None

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = Catalog(self.store_url, data_root=self.data_root)
        return self._catalog

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None

    def console(self, *, err: bool = False) -> Console:
        """A rich console; wide when piped (unless $COLUMNS says) so tables do not fold values
        (:func:`airflow_partitions.cli.console.console_for`)."""
        return console_for(self.stderr if err else self.stdout)


Handler: TypeAlias = Callable[[argparse.Namespace, Context], int]


def add_command(
    sub: SubParsers,
    name: str,
    *,
    help: str,
    description: str,
    examples: Sequence[str],
    handler: Handler | None = None,
) -> argparse.ArgumentParser:
    """A subcommand parser with examples in its epilog (every ``--help`` shows some)."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    parser = sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 88),
        epilog=epilog,
        formatter_class=RawDescriptionRichHelpFormatter,
    )
    add_global_options(parser, inherited=True)
    if handler is not None:
        parser.set_defaults(handler=handler, command_prog=parser.prog)
    return parser


def add_global_options(parser: argparse.ArgumentParser, *, inherited: bool = False) -> None:
    """``--store``, ``--data-root``, ``--debug``: accepted before or after the subcommand.

    On subcommands they default to ``SUPPRESS`` so they only override a value given there.
    """
    default: Any = argparse.SUPPRESS if inherited else None
    group = parser.add_argument_group("global options")
    group.add_argument("--store", metavar="URL", default=default,
                       help="sqlite:///path.db or hbase://host:9090 (default: the Airflow "
                            "connection partitions_default, else $AIRFLOW_PARTITIONS_STORE, else "
                            "sqlite:///$AIRFLOW_HOME/partitions.db)")
    group.add_argument("--data-root", metavar="PATH", default=default,
                       help="root of default partition locations (default: "
                            "$AIRFLOW_PARTITIONS_DATA_ROOT, else $AIRFLOW_HOME/partitions-data)")
    group.add_argument("--debug", action="store_true",
                       default=argparse.SUPPRESS if inherited else False,
                       help="show tracebacks of errors")


def add_group(sub: SubParsers, name: str, *, help: str, examples: Sequence[str]) -> SubParsers:
    """A command group (``fact``, ``storage``, ...) whose subcommand is required."""
    parser = add_command(sub, name, help=help, description=help, examples=examples)
    return parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)


def add_range_arguments(parser: argparse.ArgumentParser, *, required: bool = True,
                        narrowing: bool = False) -> None:
    """``FACT``, ``--start`` and ``--end``, the arguments of every command over a range of a
    fact, with one help text each; with ``narrowing``, also ``--time-column``, ``--periods`` and
    ``--storages``, which narrow a cover."""
    parser.add_argument("fact", metavar="FACT", help="fact name")
    parser.add_argument("--start", required=required, metavar="INSTANT",
                        help="ISO-8601 start, included (no offset: the fact's zone)")
    parser.add_argument("--end", required=required, metavar="INSTANT",
                        help="ISO-8601 end, excluded")
    if narrowing:
        parser.add_argument("--time-column", metavar="COLUMN",
                            help="time column (default: the fact's first)")
        parser.add_argument("--periods", type=csv_list, metavar="P,P",
                            help="only these update periods")
        parser.add_argument("--storages", type=csv_list, metavar="S,S",
                            help="only these storage tables")


def add_align_argument(parser: argparse.ArgumentParser) -> None:
    """``--align``: what a cover does with bounds that do not start a partition."""
    parser.add_argument("--align", choices=["outer", "inner"],
                        help="widen (outer) or narrow (inner) bounds that do not start a "
                             "partition of the finest period")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")


def print_json(ctx: Context, data: object) -> None:
    """Exactly one JSON document on stdout, plain (no rich markup or wrapping)."""
    ctx.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    ctx.stdout.flush()


def say(ctx: Context, message: str, *, json_mode: bool = False) -> None:
    """A message for a person: stdout normally, stderr when stdout carries JSON."""
    stream = ctx.stderr if json_mode else ctx.stdout
    stream.write(message + "\n")
    stream.flush()


def positive_seconds(text: str) -> float:
    """argparse ``type=`` for a duration such as ``--poll-interval``: finite seconds above 0.

    ``float()`` accepts ``nan`` and ``inf``; a poll every NaN seconds never sleeps and one
    every infinite seconds never wakes, so both are refused here.

    >>> positive_seconds("0.5")
    0.5
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds above 0")
    return value


def positive_int(text: str) -> int:
    """argparse ``type=`` for a count such as ``--max-partitions``: a whole number above 0.

    >>> positive_int("1_000_000")
    1000000
    """
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
    return value


def csv_list(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (argparse ``type=`` for comma lists)."""
    return [item.strip() for item in text.split(",") if item.strip()]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


#: Jobs of at least this many items report progress in lines when stderr is not a terminal.
LOG_PROGRESS_FROM: Final = 20_000


def _progress_lines(ctx: Context, total: int, description: str) -> Callable[[int], None]:
    """``advance(n)`` that writes ``description: 10,000 of 87,600 (11%)`` at each tenth."""
    done = 0
    reported = 0  # tenths written so far

    def advance(n: int) -> None:
        nonlocal done, reported
        done += n
        tenths = done * 10 // total
        if tenths > reported:
            reported = tenths
            ctx.stderr.write(f"{description}: {done:,} of {total:,} ({done * 100 // total}%)\n")
            ctx.stderr.flush()

    return advance


@contextmanager
def progress(ctx: Context, total: int, description: str) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``: a progress bar on stderr when it is a terminal; otherwise (a log, a
    pipe) a line at every tenth of a long job, so its progress shows there too."""
    if total <= 0 or (not ctx.stderr.isatty() and total < LOG_PROGRESS_FROM):
        yield lambda n: None
        return
    if not ctx.stderr.isatty():
        yield _progress_lines(ctx, total, description)
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=ctx.console(err=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
