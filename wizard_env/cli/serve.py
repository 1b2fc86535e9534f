"""``wizard serve``: the web table (replay viewer and play page, ``wizard_env.web``) on a local address.

    wizard serve --replays replays                # http://127.0.0.1:8000/ until Ctrl-C
    wizard serve --port 0 --players 5 --rounds 5  # a free port; the play page offers 5 players and 5 rounds
    wizard serve --opponents rule,ppo,pimc:samples=64 --move-seconds 60   # the agents clients may choose

Clients choose their opponents from the --opponents list only (by name or index): agent specs, with their
checkpoint paths and search budgets, are the operator's. A request spends at most --move-seconds on the
agents' moves (then a 504 that keeps the moves made), and Ctrl-C stops the server within seconds whatever
the agents are computing: their threads are daemons, waiting requests are answered at once, and uvicorn's
graceful shutdown is bounded by SHUTDOWN_SECONDS.

This module is imported to build the ``wizard`` parser, so it imports no web package itself: the app
(``wizard_env.web.app``, needing the ``web`` extra) is loaded when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import socket
import sys
from typing import Any

from wizard_env.util import options
from wizard_env.util.extras import require_extra
from wizard_env.util.files import check_writable
from wizard_env.web.limits import DEFAULT_OPPONENTS, MOVE_SECONDS  # no web framework: the app is loaded by run()

from .common import Terminated, make_rules, split_specs

HELP = "a local web page to watch replays and play against the agents"
DESCRIPTION = (
    "Serve the web table: a replay viewer for wizard-replay/1 files (uploaded, or from --replays) and a play "
    "page where you play one seat against agents in the browser. Finished games are saved in --replays and "
    "open in the viewer. The variant options pre-fill the play page. Needs the web extra."
)
#: The packages (import names) of the ``web`` extra.
WEB_PACKAGES = ("starlette", "uvicorn")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Seconds uvicorn waits for open requests after Ctrl-C before it cancels them.
SHUTDOWN_SECONDS = 3
#: The longest --move-seconds (an hour).
MAX_MOVE_SECONDS = 3600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard serve`` (the variant options are already added)."""
    parser.add_argument("--host", type=options.text_type, default=DEFAULT_HOST, metavar="ADDR",
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    parser.add_argument("--port", type=options.Number(int, 0, 65535), default=DEFAULT_PORT, metavar="P",
                        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--replays", type=options.path_type, default="replays", metavar="DIR",
                        help="folder the viewer lists and the play page saves finished games in (default ./replays)")
    parser.add_argument("--opponents", type=options.text_type, default=",".join(DEFAULT_OPPONENTS), metavar="SPECS",
                        help="the agents clients may choose for the other seats, comma-separated, by name or index "
                             f"(default {','.join(DEFAULT_OPPONENTS)}; pimc is 16 samples, search pimc with the network); clients never send a spec")
    parser.add_argument("--move-seconds", type=options.Number(float, 0, MAX_MOVE_SECONDS, above=True), default=MOVE_SECONDS, metavar="S",
                        help=f"the time a request may spend on the agents' moves, then a 504 that keeps the moves made "
                             f"(default {MOVE_SECONDS:g})")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def play_defaults(args: argparse.Namespace) -> dict:
    """The play page's default settings from the variant options."""
    return {"players": args.players, "rounds": args.rounds, "bidding": args.bidding,
            "bid_total_rule": args.bid_total_rule, "foresight": args.foresight}


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port) (ValueError naming the address when it is taken or not this machine's)."""
    options.check_range("--port", port, 0, 65535)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as err:
        raise ValueError(f"--host {host!r}: not an address of this machine ({err.strerror})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen()
    except OSError as err:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    return sock


def run(args: argparse.Namespace) -> int:
    """Check the options and the extra, bind the address, serve until Ctrl-C."""
    require_extra("web", WEB_PACKAGES, "wizard serve")

    make_rules(args)  # the defaults the play page offers must make a game
    offered = split_specs(args.opponents, "--opponents")
    check_writable(args.replays, folder=True)
    sock = bind(args.host, args.port)
    import uvicorn

    from wizard_env.web.app import LOOPBACK_HOSTS, create_app

    loopback = is_loopback(args.host)
    try:
        app = create_app(args.replays, play_defaults(args), hosts=LOOPBACK_HOSTS if loopback else None,
                         offered=offered, move_seconds=args.move_seconds)
    except ValueError as err:
        sock.close()
        raise ValueError(f"--opponents: {err}") from None
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"Wizard table: http://{shown}:{port}/ (play)  http://{shown}:{port}/viewer (replays in {args.replays}); Ctrl-C stops")
    if not loopback:
        print(f"wizard: warning: listening on {args.host}: anyone who can reach it can play and read the replay folder",
              file=sys.stderr)
    sys.stdout.flush()
    stopped_by = _serve(uvicorn, app, sock)
    if stopped_by == signal.SIGTERM:
        raise Terminated
    if stopped_by is not None:  # Ctrl-C: the command's usual status and line after it
        raise KeyboardInterrupt
    return 0


def _serve(uvicorn: Any, app: Any, sock: socket.socket) -> int | None:
    """Serve on ``sock`` until a signal stops the server (requests waiting on agents are answered at once, and
    uvicorn's graceful shutdown is bounded); return that signal."""
    stopped_by: list[int] = []

    class Server(uvicorn.Server):  # uvicorn is imported only when the command runs
        def handle_exit(self, sig: int, frame: Any) -> None:
            stopped_by.append(sig)
            app.state.stop()
            super().handle_exit(sig, frame)

    try:
        Server(uvicorn.Config(app, log_level="warning", lifespan="off",
                              timeout_graceful_shutdown=SHUTDOWN_SECONDS)).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn raises the signal again once shut down; whether it surfaces is a race
        pass
    return stopped_by[0] if stopped_by else None
