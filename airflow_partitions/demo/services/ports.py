"""Free loopback ports, and whether a host is loopback (nothing else is bound by default).

The api-server keeps the port it had last time when that port is free: bookmarks,
open tabs and the Partitions links already rendered (absolute ``[api] base_url``) keep working
across ``make airflow-stop``/``make airflow``. So does every other port recorded (PostgreSQL's,
the log servers'), so the ``env.sh`` a shell sourced stays valid. Checking costs one ``bind`` of
a socket a port.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

from airflow_partitions.demo.services.environment import ServicePorts

LOOPBACK = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``.

    >>> is_loopback("127.0.0.1"), is_loopback("0.0.0.0"), is_loopback("localhost")
    (True, False, True)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def free_port(host: str = LOOPBACK, avoid: frozenset[int] = frozenset()) -> int:
    """A port nobody listens on right now (the OS picks it; ``avoid`` skips ones already taken)."""
    for _ in range(20):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port: int = sock.getsockname()[1]
        if port not in avoid:
            return port
    raise RuntimeError(f"no free port on {host}")


def port_in_use(host: str, port: int) -> bool:
    """Whether something already accepts connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def port_free(host: str, port: int) -> bool:
    """Whether a server could listen on ``host:port`` now.

    Binds with ``SO_REUSEADDR`` as uvicorn does, so a port whose last connections linger in
    TIME_WAIT after a stop counts as free, and one with a listener does not.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class ApiPort:
    """The api-server's port, and why it is not last time's (None when there is nothing to
    say: it is the one asked for, last time's, or there was no last time)."""

    port: int
    moved: str | None = None


def pick_api_port(host: str = LOOPBACK, requested: int = 0, previous: int | None = None) -> ApiPort:
    """``requested`` if given; else ``previous`` (last start's) when it is free; else a free one.

    >>> pick_api_port(requested=8080).port
    8080
    """
    if requested:
        return ApiPort(requested)
    if previous and port_free(host, previous):
        return ApiPort(previous)
    port = free_port(host)
    if not previous:
        return ApiPort(port)
    return ApiPort(port, f"port {previous}, which the UI had last time, is in use on {host}: "
                         f"the UI moves to {port} (bookmarks and rendered Partitions links to "
                         f"{previous} will not answer; AIRFLOW_API_PORT= fixes the port)")


def kept_port(host: str, previous: int | None, taken: set[int]) -> int:
    """``previous`` when it is free and not ``taken``, else a free port; added to ``taken``."""
    port = previous if previous and previous not in taken and port_free(host, previous) \
        else free_port(host, frozenset(taken))
    taken.add(port)
    return port


def choose_ports(host: str = LOOPBACK, api_port: int = 0,
                 previous: ServicePorts | None = None) -> ServicePorts:
    """The api-server port asked for (0: a free one), and log-server ports beside it: last
    start's (``previous``) while free, else free ones.

    The log-server ports avoid Airflow's defaults 8793/8794: 8793 is also a common api-server
    port, and two installations on one machine must not share them.
    """
    taken = {8793, 8794}
    api = api_port or free_port(host, frozenset(taken))
    taken.add(api)
    worker = kept_port(host, previous.worker_logs if previous else None, taken)
    trigger = kept_port(host, previous.trigger_logs if previous else None, taken)
    return ServicePorts(host, api, worker, trigger)
