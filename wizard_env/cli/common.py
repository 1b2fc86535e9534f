"""What several ``wizard`` commands share: the parser that reports one error line, the variant options, the rules
they make, agent lists, the options generated from a config dataclass, and the exit statuses.
"""

from __future__ import annotations

import argparse
import inspect
import re
import signal
import sys

from wizard_env.agents.registry import parse_spec
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, parse_rounds
from wizard_env.envs.settings import SETTINGS, Setting, get_setting, refuse_beside
from wizard_env.util import options

#: Exit status after one ``wizard: error: ...`` line.
USAGE_ERROR = 2
#: Exit status of a ``play`` game given up (input ended or ``quit``), and of output whose reader stopped early.
ABANDONED = 1
#: Exit status after SIGTERM.
TERMINATED = 128 + signal.SIGTERM


class UsageError(Exception):
    """A command line argparse rejects (reported as one ``wizard: error:`` line)."""


class Terminated(BaseException):
    """SIGTERM, raised where the program is, so that files being written are dropped as after Ctrl-C."""


#: Actions meant to be given more than once (``--set A=1 --set B=2``); any other option given twice is refused.
REPEATABLE = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction, argparse._HelpAction,
              argparse._VersionAction)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises ``UsageError`` instead of printing the usage and exiting, and refuses an option
    given twice (argparse would keep the last value and drop the first without a word)."""

    def error(self, message: str):
        """Raise instead of printing the usage and exiting, so main reports one line."""
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, after refusing an option of this parser given twice (each subcommand's parser checks its own)."""
        args = sys.argv[1:] if args is None else list(args)
        given: set[argparse.Action] = set()
        for arg in args:
            if arg == "--":
                break
            action = self._option_action(arg.partition("=")[0]) if arg.startswith("--") else None
            if action is None or isinstance(action, REPEATABLE):
                continue
            if action in given:
                self.error(f"argument {'/'.join(action.option_strings)}: given twice: give it once")
            given.add(action)
        return super().parse_known_args(args, namespace)

    def _option_action(self, name: str) -> argparse.Action | None:
        """The action of the option ``name`` (or of the one option it abbreviates); None if it names none of ours."""
        actions = self._option_string_actions
        if name in actions:
            return actions[name]
        matches = {actions[option] for option in actions if self.allow_abbrev and option.startswith(name)}
        return matches.pop() if len(matches) == 1 else None


# -- the game variant ----------------------------------------------------------------------------


class Given(argparse.Action):
    """Stores an option's value (a flag's True) and adds the option to ``args.given_variant``, so that a command can
    refuse variant options beside one that fixes the variant (``--setting``), even at their defaults. A command's own
    option that a setting fixes too (``wizard train --mix``) takes ``action=Given`` as well."""

    def __init__(self, option_strings: list[str], dest: str, flag: bool = False, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0 if flag else None, **kwargs)
        self.flag = flag

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, True if self.flag else values)
        namespace.given_variant = (*namespace.given_variant, option_string)


def variant_options() -> Parser:
    """A parent parser with the options of the game variant (players, rounds, bidding, bid total rule, foresight);
    ``args.given_variant`` holds the ones given on the command line."""
    parent = Parser(add_help=False)
    parent.set_defaults(given_variant=())
    group = parent.add_argument_group("game variant")
    group.add_argument("--players", action=Given, type=options.Number(int, MIN_PLAYERS, MAX_PLAYERS), default=4, metavar="N",
                       help="3 to 6 players (default 4)")
    group.add_argument(
        "--rounds", type=options.text_type, action=Given, default="standard", metavar="R",
        help="standard (1..60/N cards), amigo (tournament schedule), K (rounds 1..K), "
        "or comma-separated hand sizes such as 1,3,5 ('3,' is one round of 3 cards); default standard",
    )
    group.add_argument("--bidding", action=Given, choices=("open", "hidden", "secret"), default="open",
                       help="open: bids seen as made; hidden: revealed together before play; secret: at round end")
    group.add_argument("--bid-total-rule", action=Given, flag=True, default=False,
                       help="plus/minus 1: the dealer may not make the bids add up to the tricks (open bidding)")
    group.add_argument("--foresight", action=Given, flag=True, default=False,
                       help="in one-card rounds you see everyone's card but your own")
    return parent


def make_rules(args: argparse.Namespace) -> Rules:
    """The Rules the variant options describe (ValueError when impossible)."""
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        raise ValueError(f"--players {args.players}: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players")
    return Rules.make(args.players, parse_rounds(args.rounds), args.bidding, args.bid_total_rule, args.foresight)


def add_setting_option(parser: argparse.ArgumentParser, effect: str) -> None:
    """``--setting NAME``, a named benchmark setting (``wizard_env.envs.settings``); ``effect``: what it does in this
    command. The variant options, and the options added with ``action=Given``, are refused beside it (``chosen_setting``)."""
    parser.add_argument("--setting", choices=list(SETTINGS), metavar="NAME",
                        help=f"a named benchmark setting ({', '.join(SETTINGS)}): {effect}; no variant options beside it")


def chosen_setting(args: argparse.Namespace) -> Setting | None:
    """The setting of ``--setting`` (None without it); ValueError naming the options in ``args.given_variant`` (given on
    the command line, even at their defaults), which the setting fixes."""
    if args.setting is None:
        return None
    setting = get_setting(args.setting)
    refuse_beside(setting, args.given_variant)
    return setting


def setting_specs(specs: list[str], setting: Setting, where: str) -> list[str]:
    """``--agents``' one agent (``specs``, as ``split_specs`` gives them), then ``setting``'s opponents: a spec per
    seat; ValueError for more or fewer agents than one, saying ``where`` the opponents sit and the one agent goes."""
    if len(specs) != 1:
        raise ValueError(f"--agents names {len(specs)} agents beside --setting {setting.name}, whose opponents "
                         f"({', '.join(setting.opponents)}) {where}")
    return [*specs, *setting.opponents]


def command_rules(args: argparse.Namespace) -> tuple[Rules, Setting | None]:
    """The rules of ``--setting`` (and the setting), or without it those of the variant options (and None)."""
    setting = chosen_setting(args)
    return (make_rules(args) if setting is None else setting.rules()), setting


# -- agents --------------------------------------------------------------------------------------


def split_specs(text: str, option: str) -> list[str]:
    """The agent specs of a comma list, each checked; ValueError naming ``option`` and the spec at fault."""
    specs = [s.strip() for s in text.split(",")]
    for i, spec in enumerate(specs):
        try:
            parse_spec(spec)
        except ValueError as err:
            if i and ":" in specs[i - 1]:  # e.g. ppo:runs/a,b.npz: the comma split a checkpoint path
                raise ValueError(f"{option}: {err}; ',' separates agents, so '{specs[i - 1]},{spec}' was read as two: "
                                 "a checkpoint path cannot contain ',' here (rename or link the file)") from None
            raise ValueError(f"{option}: {err}") from None
    return specs


def seat_specs(text: str, count: int, option: str) -> list[str]:
    """Agent specs from a comma list: one spec for every seat, or exactly ``count`` of them."""
    specs = split_specs(text, option)
    if len(specs) == 1:
        return specs * count
    if len(specs) != count:
        raise ValueError(f"{option} names {len(specs)} agents for {count} seats: give one name for all, or exactly {count}")
    return specs


# -- options of the training commands ------------------------------------------------------------


def field_docs(cls) -> dict[str, str]:
    """The ``#:`` comment of each field of a dataclass, by field name (``wizard train --help`` shows them)."""
    lines = inspect.getsource(cls).splitlines()
    return {m[1]: m[2] for m in (re.match(r"\s+(\w+):.*#:\s*(.+)$", line) for line in lines) if m}


def add_number_options(parser: argparse.ArgumentParser, defaults, docs: dict[str, str], ints: tuple[str, ...],
                       floats: tuple[str, ...], ranges: dict[str, tuple[float | None, float | None]], above: tuple[str, ...] = (),
                       unset: bool = False) -> None:
    """An option ``--a-b`` for each numeric field ``a_b`` of a config dataclass, with its doc line, its default and its range
    in ``ranges`` (the config module's ``RANGES``; ``above``: the fields whose least is excluded), refused outside it
    while the command line is parsed (``unset``: None where the option is not given, so that a command can tell, the
    default only in the help)."""
    for names, kind, shown in ((ints, int, "{:,}"), (floats, float, "{:g}")):
        for name in names:
            kind_type = options.seed_type if name == "seed" else options.Number(kind, *ranges[name], above=name in above)
            parser.add_argument(f"--{name.replace('_', '-')}", type=kind_type, default=None if unset else getattr(defaults, name),
                                help=f"{docs[name]} (default {shown.format(getattr(defaults, name))})")


def parse_mix(text: str) -> list[int]:
    """``3,4,5,6`` as a sorted list of distinct player counts; ValueError if malformed."""
    from wizard_env.envs.mixed_vec_env import check_players

    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--mix {text!r}: expected player counts such as 3,4,5,6") from None
    try:
        return list(check_players(counts))
    except ValueError as e:
        raise ValueError(f"--mix {text!r}: {e}") from None


def require_packages(packages: tuple[str, ...], command: str) -> None:
    """ValueError naming the first of ``packages`` that cannot be imported (they are imported), from the train extras."""
    for package in packages:
        try:
            __import__(package)
        except ImportError:
            raise ValueError(f"{command} needs {package}, from the train extras: pip install -c constraints.txt -e '.[train]'") from None
