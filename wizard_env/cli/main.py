"""The ``wizard`` command: simulate games between agents, show replay files, play a seat yourself, serve the web table.

    wizard simulate --players 4 --agents rule,rule,rule,random --games 200 --seed 0 --replay games.jsonl
    wizard replay games.jsonl --game 2
    wizard play --players 3 --opponents rule --rounds 5 --replay my-game.jsonl
    wizard serve --replays replays   (needs the web extra)

Each subcommand is a module of this package (``COMMAND_MODULES``), whose docstring is its documentation.

Exit status: 0 on success; 2 after one ``wizard: error: ...`` line on stderr for bad arguments,
impossible configurations or unreadable replay files (every option is checked before any work starts,
by the type and range it declares in ``wizard_env.util.options``, and one given twice is refused unless it is
meant to repeat, as ``--set``; an unexpected error is one line too, never a traceback); 1 when a ``play`` game is abandoned (input ended
or ``quit``); 130 after Ctrl-C and 143 after SIGTERM (also when compiled code reports either as a SystemError), files being
written left as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from typing import Iterator, Sequence

from numba.core import event as numba_event

from wizard_env.engine.kernels import CompilerDisabledError
from wizard_env.util.checks import short_repr

from .common import ABANDONED, TERMINATED, USAGE_ERROR, Parser, Terminated, UsageError, variant_options

#: The longest error line ``main`` prints (a longer one, echoing a huge value, is cut in the middle).
MAX_MESSAGE = 500

#: The subcommands, in the order ``wizard --help`` lists them, and their modules. Each module defines ``HELP``,
#: ``DESCRIPTION``, ``add_arguments(parser)`` (the variant options are already added, unless the module sets
#: ``VARIANT_OPTIONS = False``) and ``run(args) -> int``.
COMMAND_MODULES: dict[str, str] = {
    "simulate": "wizard_env.cli.simulate", "replay": "wizard_env.cli.replay", "play": "wizard_env.cli.play",
    "eval": "wizard_env.cli.eval", "eval-suite": "wizard_env.cli.eval_suite", "eval-iterations": "wizard_env.cli.eval_iterations",
    "league": "wizard_env.cli.league", "compare-evals": "wizard_env.cli.compare_evals", "compare-arrays": "wizard_env.cli.compare_arrays",
    "card": "wizard_env.cli.card",
    "bench": "wizard_env.cli.bench", "train": "wizard_env.cli.train",
    "train-values": "wizard_env.cli.train_values", "baseline": "wizard_env.cli.baseline", "recipe": "wizard_env.cli.recipe",
    "serve": "wizard_env.cli.serve",
}


def installed_version() -> str:
    """The version of the installed wizard-env distribution (pyproject.toml's), or a note that it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("wizard-env")
    except metadata.PackageNotFoundError:
        return "(version unknown: wizard-env is not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The ``wizard`` argument parser with its subcommands."""
    parser = Parser(prog="wizard", description="Wizard card game: simulate agents, show replays, play a seat.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    variant = variant_options()
    for name, module_name in COMMAND_MODULES.items():
        module = importlib.import_module(module_name)
        parents = [variant] if getattr(module, "VARIANT_OPTIONS", True) else []
        sub = commands.add_parser(name, parents=parents, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


#: What ``wizard`` says once when numba starts compiling this package's code (the first run on a machine).
COMPILE_NOTICE = "wizard: compiling the engine and agents for this machine, once (up to half a minute) ..."


class _CompileNotice(numba_event.Listener):
    """Prints ``COMPILE_NOTICE`` on stderr at the first compile of one of this package's functions, when stderr
    is a terminal (as the progress bars: scripts and logs get the output alone).

    numba compiles on a function's first call unless its on-disk cache holds it, and says nothing meanwhile;
    a first ``wizard eval`` with RuleAgents would otherwise sit silent for 20-30 s.
    """

    def __init__(self) -> None:
        self.said = False

    def on_start(self, event: numba_event.Event) -> None:
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
        if not self.said and module.split(".")[0] == __name__.split(".")[0]:
            self.said = True
            if sys.stderr.isatty():
                print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, event: numba_event.Event) -> None:
        pass


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises Terminated and SIGINT KeyboardInterrupt in the main thread (elsewhere signals
    cannot be handled).

    SIGINT too: a shell starts a command run in the background of a script (``wizard train ... &``) with SIGINT
    ignored, and Python then leaves it ignored, so ``kill -INT`` (as Ctrl-C) did nothing and the run went on to its end.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    interrupt = signal.getsignal(signal.SIGINT)
    if interrupt == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        if interrupt == signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_signal(err: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or Terminated that ``err`` is or wraps, else None: numba turns one raised while compiled
    code calls back into Python into a SystemError ("... returned a result with an exception set") caused by it."""
    seen: set[int] = set()
    link: BaseException | None = err
    while link is not None and id(link) not in seen:
        if isinstance(link, (KeyboardInterrupt, Terminated)):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def _internal_error(err: BaseException) -> str:
    return f"internal error ({type(err).__name__}: {short_repr(str(err), 200)}); please report it with the command line"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``wizard`` command; return the exit status."""
    from threadpoolctl import threadpool_limits

    # one BLAS thread: the agents' matmuls are small, and two threads on a busy machine ran them 6x slower
    threadpool_limits(1, user_api="blas")
    try:
        with _sigterm_raises(), numba_event.install_listener("numba:compile", _CompileNotice()):
            args = build_parser().parse_args(argv)
            return args.run(args)
    except (UsageError, CompilerDisabledError) as err:
        message = str(err)
    except BrokenPipeError:  # output piped into a reader that stopped early (e.g. head)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return ABANDONED
    except OSError as err:
        message = f"{err.strerror}: {err.filename}" if err.filename else str(err)
    except ValueError as err:
        message = str(err)
    except ImportError as err:  # an optional package missing (MissingExtra names it and the install command)
        message = str(err)
    except (KeyboardInterrupt, Terminated, SystemError) as err:
        stop = stop_signal(err)
        if isinstance(stop, KeyboardInterrupt):
            print("\nwizard: interrupted", file=sys.stderr)
            return 130
        if isinstance(stop, Terminated):
            print("\nwizard: terminated", file=sys.stderr)
            return TERMINATED
        message = _internal_error(err)
    except SystemExit as exit_:  # --help
        return exit_.code if isinstance(exit_.code, int) else 0
    except MemoryError:  # the size options are checked against memory first; this is the backstop
        message = "out of memory: this machine cannot hold what the options ask for"
    except Exception as err:  # a bug: still one line and no traceback, as the contract promises
        message = _internal_error(err)
    message = " ".join(message.splitlines())
    if len(message) > MAX_MESSAGE:  # a huge value echoed back: keep the start, which names the option, and the end
        cut = len(message) - MAX_MESSAGE + 100
        message = f"{message[:MAX_MESSAGE - 200]} ... ({cut:,} characters cut) ... {message[-100:]}"
    print(f"wizard: error: {message}", file=sys.stderr)
    return USAGE_ERROR
