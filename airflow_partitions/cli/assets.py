"""``assets follow`` and ``assets list``: coverage assets' events for writes Airflow never sees.

``follow`` is a long-running service (``make airflow`` starts it beside the scheduler): it
announces each window of each coverage asset once it is coverable, through the api-server's
REST API. The API's address and user come from options or the environment; the password only
from the environment (``AIRFLOW_PARTITIONS_API_PASSWORD``), never from the command line.
Airflow's REST client is imported only when ``follow`` runs.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading

from airflow_partitions.cli.base import Context, SubParsers, UsageError, add_command, say
from airflow_partitions.coverage_events import CoverageAssetSpec, EmissionMarkers

API_URL_ENV = "AIRFLOW_PARTITIONS_API_URL"
API_USER_ENV = "AIRFLOW_PARTITIONS_API_USER"
API_PASSWORD_ENV = "AIRFLOW_PARTITIONS_API_PASSWORD"  # noqa: S105 - a variable's name


def register(sub: SubParsers) -> None:
    """Add the ``assets`` group."""
    group = add_command(
        sub, "assets", help="coverage assets: announce their windows, list them",
        description="Coverage assets (airflow_partitions.assets.CoverageAsset) are Airflow "
                    "assets whose partitioned events say that a window of a fact is coverable. "
                    "The provider's operators announce the windows their writes complete; "
                    "'assets follow' announces the others (CLI writes, Spark jobs, imports).",
        examples=["airflow-partitions assets follow --api-url http://127.0.0.1:8080",
                  "airflow-partitions assets list"],
    )
    commands = group.add_subparsers(dest="assets_command", metavar="COMMAND", required=True)
    follow = add_command(
        commands, "follow", help="announce coverage events until stopped",
        description="Follow the catalog and announce, through Airflow's REST API, each window "
                    "of each coverage asset Airflow knows once the catalog can cover it, and "
                    "again (extra restated=true) when a partition it was covered by is "
                    "restated. Windows already coverable when an asset is first followed are "
                    "recorded, not announced. Idle cost: one catalog read per followed fact "
                    "per poll. Stops on SIGTERM or Ctrl-C.",
        examples=["AIRFLOW_PARTITIONS_API_PASSWORD=... airflow-partitions assets follow "
                  "--api-url http://127.0.0.1:8080 --api-user admin"],
        handler=follow_assets,
    )
    follow.add_argument("--api-url", default=os.environ.get(API_URL_ENV),
                        help=f"the api-server, http(s)://host:port (default ${API_URL_ENV})")
    follow.add_argument("--api-user", default=os.environ.get(API_USER_ENV, "admin"),
                        help=f"the Airflow user to post as (default ${API_USER_ENV}, else admin);"
                             f" its password is read from ${API_PASSWORD_ENV}")
    follow.add_argument("--poll", type=float, default=0.5, metavar="SECONDS",
                        help="seconds between catalog checks (default 0.5)")
    follow.add_argument("--refresh", type=float, default=10.0, metavar="SECONDS",
                        help="seconds between asking Airflow for its coverage assets "
                             "(default 10)")
    follow.add_argument("--once", action="store_true",
                        help="one round, then exit (prints what was announced)")
    listing = add_command(
        commands, "list", help="the coverage assets followed, and their announced windows",
        description="Every coverage asset the follower or a writing task has followed, with "
                    "when it was first followed and how many windows were announced.",
        examples=["airflow-partitions assets list"], handler=list_assets,
    )
    del listing


def follow_assets(args: argparse.Namespace, ctx: Context) -> int:
    from airflow_partitions.assets.follower import Follower
    from airflow_partitions.assets.rest import CoverageEventsApi

    if not args.api_url:
        raise UsageError(f"pass --api-url or set {API_URL_ENV}")
    if not args.poll > 0 or not args.refresh > 0:
        raise UsageError("--poll and --refresh are seconds above 0")
    api = CoverageEventsApi(args.api_url, args.api_user, os.environ.get(API_PASSWORD_ENV, ""),
                            timeout=10)
    if not ctx.debug:
        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    follower = Follower(ctx.catalog, api, poll=args.poll, refresh=args.refresh)
    if args.once:
        for emission in follower.poll_once():
            say(ctx, f"{emission.spec.name} {emission.key}"
                     f"{' restated' if emission.restated else ''} version {emission.version}")
        return 0
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    follower.run(stop)
    return 0


def list_assets(args: argparse.Namespace, ctx: Context) -> int:
    markers = EmissionMarkers(ctx.catalog.rows.kv)
    followed = markers.assets()
    for uri, since in followed:
        spec = CoverageAssetSpec.from_uri(uri)
        states = [m.doc["status"] for _, m in markers.markers(uri)]
        say(ctx, f"{spec.name if spec else uri}: followed since {since}, "
                 f"{states.count('emitted')} window(s) announced, "
                 f"{states.count('known')} known before, {states.count('claimed')} claimed")
    if not followed:
        say(ctx, "no coverage asset is followed yet")
    return 0
