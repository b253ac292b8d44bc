"""``fact create|list`` and ``storage create|list|show|set-producer``: the catalog's definitions."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from rich.table import Table

from airflow_partitions.catalog import FactDef, Producer, StorageDef, parse_producer_items
from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    UsageError,
    add_command,
    add_group,
    add_json_flag,
    csv_list,
    print_json,
    say,
)
from airflow_partitions.periods import UpdatePeriod


def register(sub: SubParsers) -> None:
    """Add the ``fact`` and ``storage`` command groups."""
    facts = add_group(sub, "fact", help="create and list facts (logical datasets)",
                      examples=["airflow-partitions fact create events --time-column dt",
                                "airflow-partitions fact list --json"])
    p = add_command(
        facts, "create", help="create a fact",
        description="Create a fact: a logical dataset whose storage tables share its time "
                    "columns and time zone.",
        examples=["airflow-partitions fact create events --time-column dt",
                  "airflow-partitions fact create sales --time-column dt --time-column it "
                  "--time-zone Europe/Paris --exist-ok"],
        handler=fact_create,
    )
    p.add_argument("fact", metavar="FACT", help="fact name (letters, digits, _)")
    p.add_argument("--time-column", action="append", dest="time_columns", metavar="COLUMN",
                   help="a time partition column; repeat for several (default: dt)")
    p.add_argument("--time-zone", default="UTC", metavar="TZ",
                   help="IANA zone of the partition values (default: UTC)")
    p.add_argument("--exist-ok", action="store_true",
                   help="succeed if an identical fact already exists")

    p = add_command(facts, "list", help="list facts", description="List the catalog's facts.",
                    examples=["airflow-partitions fact list",
                              "airflow-partitions fact list --json"],
                    handler=fact_list)
    add_json_flag(p)

    storages = add_group(sub, "storage", help="create and list storage tables of facts",
                         examples=["airflow-partitions storage create events events_raw "
                                   "--periods HOURLY,DAILY --partition-columns dt,region:string",
                                   "airflow-partitions storage list events"])
    p = add_command(
        storages, "create", help="create a storage table of a fact",
        description="Create a storage table of FACT. The fact's time columns are partition "
                    "columns of every storage; --partition-columns adds others (name:type, "
                    "type string by default; int, bigint, date, timestamp also work). Without "
                    "--location, partitions live under --data-root/{fact}/{storage}/{period}/"
                    "col=value/...",
        examples=["airflow-partitions storage create events events_raw --periods HOURLY,DAILY "
                  "--partition-columns dt,region:string",
                  "airflow-partitions storage create events events_rollup --periods DAILY,MONTHLY "
                  "--priority 1 --location 's3://bucket/rollup/{period}/{dt}' "
                  "--timeline-class DAILY=Ranges --timeline-class MONTHLY.dt=StoreAll"],
        handler=storage_create,
    )
    p.add_argument("fact", metavar="FACT")
    p.add_argument("storage", metavar="STORAGE")
    p.add_argument("--periods", type=csv_list, required=True, metavar="P1,P2",
                   help="update periods, e.g. HOURLY,DAILY,MONTHLY")
    p.add_argument("--partition-columns", type=csv_list, metavar="COL[:TYPE],...",
                   help="partition columns in key order (the fact's time columns are added "
                        "first when missing)")
    p.add_argument("--location", metavar="TEMPLATE",
                   help="location template with {fact}, {storage}, {period} and {column} fields")
    p.add_argument("--priority", type=int, default=0, metavar="N",
                   help="tie-breaker when covers could use several storages (default 0)")
    p.add_argument("--timeline-class", action="append", default=[], metavar="PERIOD[.COL]=CLASS",
                   help="timeline implementation (StoreAll, EndsAndHoles, Ranges) per period or "
                        "period.column; repeatable (default EndsAndHoles)")
    p.add_argument("--producer", action="append", default=[], metavar="PERIOD=DAG[@RULE],...",
                   help="the Airflow DAG producing a period's partitions, e.g. "
                        "HOURLY=events_hourly_ingest; @RULE picks the run's logical date "
                        "(start, end, start+PT1H, end-P1D; default start); repeatable")
    _slice_conf_argument(p)
    p.add_argument("--dimension", action="append", default=[], metavar="COL=V1,V2[@SINCE]",
                   help="declare a non-time column a dimension whose values must all be "
                        "present (region=eu,us; apac@2025-06-01T00:00:00Z from an instant); "
                        "repeatable; see docs/dimensions.md")
    p.add_argument("--exist-ok", action="store_true",
                   help="succeed if an identical storage already exists")

    p = add_command(
        storages, "set-dimension", help="add values to a dimension's domain, or retire one",
        description="Add values to the domain of a dimension (declaring the column a dimension "
                    "if it is not one yet): COL=VALUE is required always, COL=VALUE@INSTANT "
                    "from an instant, COL=VALUE@SINCE..UNTIL during a span; "
                    "COL=VALUE@..INSTANT retires a declared value from that instant (a value "
                    "the domain lacks is refused, exit 2). A value must fit a partition "
                    "location (no '/', '..', ...). Safe against concurrent updates. See "
                    "docs/dimensions.md.",
        examples=["airflow-partitions storage set-dimension events_raw "
                  "region=apac@2025-06-01T00:00:00Z",
                  "airflow-partitions storage set-dimension events_raw "
                  "region=apac@..2026-01-01T00:00:00Z"],
        handler=storage_set_dimension,
    )
    p.add_argument("storage", metavar="STORAGE")
    p.add_argument("dimension", metavar="COL=VALUE[@SINCE[..UNTIL]]",
                   help="the values to add (comma-separated) or the one to retire")

    p = add_command(
        storages, "list", help="list storage tables",
        description="List storage tables, all or those of one fact.",
        examples=["airflow-partitions storage list",
                  "airflow-partitions storage list events --json"],
        handler=storage_list,
    )
    p.add_argument("fact", metavar="FACT", nargs="?", help="only this fact's storages")
    add_json_flag(p)

    p = add_command(
        storages, "show", help="show one storage table, with its producers and dimensions",
        description="Show a storage table's definition: columns, periods, location, timeline "
                    "classes, per period the DAG that produces it, and each dimension's "
                    "domain with its spans (and the columns that are not dimensions).",
        examples=["airflow-partitions storage show events_rollup",
                  "airflow-partitions storage show events_rollup --json"],
        handler=storage_show,
    )
    p.add_argument("storage", metavar="STORAGE")
    add_json_flag(p)

    p = add_command(
        storages, "set-producer", help="set or remove the DAGs producing a storage's periods",
        description="Name the Airflow DAG whose runs produce a period's partitions (the run "
                    "whose logical date is the partition's start, unless @RULE says otherwise: "
                    "start, end, or either +/- an ISO-8601 duration). Safe against concurrent "
                    "updates. See docs/backfill.md.",
        examples=["airflow-partitions storage set-producer events_rollup "
                  "DAILY=events_daily_rollup MONTHLY=events_monthly_rollup",
                  "airflow-partitions storage set-producer events_raw "
                  "HOURLY=events_hourly_ingest@end-PT1H",
                  "airflow-partitions storage set-producer events_rollup --remove MONTHLY"],
        handler=storage_set_producer,
    )
    p.add_argument("storage", metavar="STORAGE")
    p.add_argument("producers", nargs="*", metavar="PERIOD=DAG[@RULE]",
                   help="a period and its producer; several are fine")
    p.add_argument("--remove", action="append", default=[], metavar="PERIOD",
                   help="remove a period's producer; repeatable")
    _slice_conf_argument(p)


def _slice_conf_argument(p: argparse.ArgumentParser) -> None:
    """``--slice-conf``, shared by ``storage create`` and ``storage set-producer``."""
    p.add_argument("--slice-conf", action="append", default=[], metavar="PERIOD=KEY",
                   help="a producer takes the slices it must produce (storages with declared "
                        "dimensions) in one run, under this run-conf key: HOURLY=regions gives "
                        "conf {\"regions\": [\"eu\", \"us\"]} (default: one run per slice, "
                        "conf {\"partition_slice\": {\"region\": \"eu\"}}); PERIOD= resets it; "
                        "repeatable; see docs/backfill.md")


def fact_create(args: argparse.Namespace, ctx: Context) -> int:
    fdef = ctx.catalog.create_fact(args.fact, tuple(args.time_columns or ["dt"]),
                                   args.time_zone, exist_ok=args.exist_ok)
    say(ctx, f"fact {fdef.name}: time columns {', '.join(fdef.time_columns)}; zone {fdef.tz}")
    return 0


def fact_list(args: argparse.Namespace, ctx: Context) -> int:
    facts = ctx.catalog.list_facts()
    if args.json:
        print_json(ctx, [f.to_json() for f in facts])
        return 0
    counts: dict[str, int] = {}
    for sdef in ctx.catalog.list_storages():
        counts[sdef.fact] = counts.get(sdef.fact, 0) + 1
    table = Table("fact", "time columns", "zone", "storages")
    for f in facts:
        table.add_row(f.name, ", ".join(f.time_columns), f.tz, str(counts.get(f.name, 0)))
    _print_table(ctx, table, facts, "no facts yet; create one with `fact create`")
    return 0


def parse_timeline_classes(items: list[str]) -> dict[str, str]:
    """``["HOURLY=Ranges", "DAILY.dt=StoreAll"]`` -> a mapping; the catalog checks the names."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, kind = item.partition("=")
        if not sep or not key.strip() or not kind.strip():
            raise UsageError(f"--timeline-class {item!r}: expected PERIOD[.COLUMN]=CLASS")
        period, dot, column = key.strip().partition(".")
        out[period.upper() + (dot + column if dot else "")] = kind.strip()
    return out


def storage_create(args: argparse.Namespace, ctx: Context) -> int:
    if not args.periods:
        raise UsageError("--periods is empty; give e.g. --periods HOURLY,DAILY")
    sdef = ctx.catalog.create_storage(
        args.fact, args.storage, args.periods,
        columns=args.partition_columns,
        location=args.location,
        priority=args.priority,
        timeline_classes=parse_timeline_classes(args.timeline_class),
        exist_ok=args.exist_ok,
        producers=_with_slice_confs(_producers(args.producer, "--producer"), args.slice_conf,
                                    {}) if args.producer or args.slice_conf else None,
        dimensions=args.dimension,
    )
    say(ctx, f"storage {sdef.name} of fact {sdef.fact}: periods "
             f"{', '.join(p.name for p in sdef.periods)}; columns {_columns(sdef)}; "
             f"location {sdef.location}" + (f"; producers {_producer_text(sdef)}"
                                            if sdef.producers else "")
        + "".join(f"; dimension {d.text()}" for d in sdef.dimensions))
    return 0


def storage_set_dimension(args: argparse.Namespace, ctx: Context) -> int:
    sdef = ctx.catalog.set_dimension(args.storage, args.dimension)
    say(ctx, f"storage {sdef.name}: " + "; ".join(
        f"dimension {d.text()}" for d in sdef.dimensions))
    return 0


def _dimension_lines(sdef: StorageDef) -> list[str]:
    """One line per dimension with its values and their spans, then the columns where any
    value counts: ``storage show`` never hides which columns a cover checks."""
    lines = [f"  dimension {d.column}: " + ", ".join(v.text() for v in d.values)
             for d in sdef.dimensions]
    lines += [f"  dimension {c}: not a dimension, any value counts"
              for c in sdef.undeclared_columns]
    return lines


def _producers(items: list[str], option: str) -> dict[str, Producer]:
    out: dict[str, Producer] = {}
    for item in items:
        for period, producer in parse_producer_items(item, option).items():
            if period in out:
                raise UsageError(f"{option} names {period} twice")
            out[period] = producer
    return out


def _with_slice_confs(producers: dict[str, Producer], items: list[str],
                      existing: Mapping[str, Producer]) -> dict[str, Producer]:
    """Apply ``--slice-conf PERIOD=KEY`` to the producers given, or else to the storage's
    existing producer of that period (``PERIOD=`` resets it to one run per slice)."""
    out = dict(producers)
    for item in items:
        period, sep, key = item.partition("=")
        if not sep or not period.strip():
            raise UsageError(f"--slice-conf {item!r}: expected PERIOD=KEY")
        name = UpdatePeriod.of(period.strip().upper()).name
        base = out.get(name) or existing.get(name)
        if base is None:
            raise UsageError(f"--slice-conf {item!r}: no producer of {name} is given or set")
        out[name] = base.with_slice_conf(key.strip() or None)
    return out


def _producer_text(sdef: StorageDef) -> str:
    return ",".join(f"{k}={p.spec()}" for k, p in sdef.producers.items()) or "-"


def storage_show(args: argparse.Namespace, ctx: Context) -> int:
    sdef = ctx.catalog.get_storage(args.storage)
    if args.json:
        print_json(ctx, {**sdef.to_json(),
                         "producers": {k: p.to_json() for k, p in sdef.producers.items()}})
        return 0
    classes = ", ".join(f"{k}={v}" for k, v in sorted(sdef.timeline_classes.items()))
    lines = [f"storage {sdef.name} of fact {sdef.fact}",
             f"  periods   {', '.join(p.name for p in sdef.periods)}",
             f"  columns   {_columns(sdef)}",
             f"  location  {sdef.location}",
             f"  zone      {sdef.tz}; priority {sdef.priority}; timeline classes {classes or '-'}"]
    for period in sdef.periods:
        producer = sdef.producers.get(period.name)
        lines.append(f"  producer  {period.name}: " + (
            f"{producer.dag_id} (logical date: {producer.logical_date}"
            + (f"; slices in conf {producer.slice_conf!r}" if producer.slice_conf else "")
            + ")" if producer else "-"))
    say(ctx, "\n".join(lines + _dimension_lines(sdef)))
    return 0


def storage_set_producer(args: argparse.Namespace, ctx: Context) -> int:
    changes: dict[str, Producer | None] = dict(_with_slice_confs(
        _producers(args.producers, "PERIOD=DAG"), args.slice_conf,
        ctx.catalog.get_storage(args.storage).producers if args.slice_conf else {}))
    for period in args.remove:
        name = period.strip().upper()
        if name in changes:
            raise UsageError(f"{name} is both set and removed")
        changes[name] = None
    if not changes:
        raise UsageError("give PERIOD=DAG[@RULE], --slice-conf PERIOD=KEY or --remove PERIOD")
    sdef = ctx.catalog.set_producers(args.storage, changes)
    say(ctx, f"storage {sdef.name}: producers {_producer_text(sdef)}")
    return 0


def storage_list(args: argparse.Namespace, ctx: Context) -> int:
    if args.fact is not None:
        ctx.catalog.get_fact(args.fact)  # an unknown fact is an error, not an empty list
    storages = ctx.catalog.list_storages(args.fact)
    if args.json:
        print_json(ctx, [s.to_json() for s in storages])
        return 0
    table = Table("storage", "fact", "periods", "columns", "priority", "timeline classes",
                  "producers", "location")
    for s in storages:
        classes = ", ".join(f"{k}={v}" for k, v in sorted(s.timeline_classes.items()))
        table.add_row(s.name, s.fact, ",".join(p.name for p in s.periods), _columns(s),
                      str(s.priority), classes or "-", _producer_text(s), s.location)
    _print_table(ctx, table, storages, "no storages; create one with `storage create`")
    return 0


def _columns(sdef: StorageDef) -> str:
    return ",".join(f"{c}:{t.value}" for c, t in sdef.columns)


def _print_table(ctx: Context, table: Table, rows: list[FactDef] | list[StorageDef],
                 empty: str) -> None:
    if rows:
        ctx.console().print(table)
    else:
        say(ctx, empty)
