"""Free loopback ports, and whether a host is loopback (nothing else is bound by default)."""

from __future__ import annotations

import ipaddress
import socket

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


def choose_ports(host: str = LOOPBACK, api_port: int = 0) -> ServicePorts:
    """The api-server port asked for (0: a free one), and free log-server ports beside it.

    The log-server ports avoid Airflow's defaults 8793/8794: 8793 is also a common api-server
    port, and two installations on one machine must not share them.
    """
    api = api_port or free_port(host)
    worker = free_port(host, frozenset({api, 8793, 8794}))
    trigger = free_port(host, frozenset({api, worker, 8793, 8794}))
    return ServicePorts(host, api, worker, trigger)
