"""Named benchmark settings: a fixed game and a fixed table of opponents, small to large, so results compare.

| setting | players | rounds | bidding | bid total rule | foresight | opponents | gymnasium id |
| --- | ---: | --- | --- | --- | --- | --- | --- |
| `wizard-3p-5r` | 3 | 1..5 | open | off | off | rule, rule | `wizard_env/wizard-3p-5r-v1` |
| `wizard-4p-5r` | 4 | 1..5 | open | off | off | rule, rule, rule | `wizard_env/wizard-4p-5r-v1` |
| `wizard-4p` | 4 | 1..15 | open | off | off | rule, rule, rule | `wizard_env/wizard-4p-v1` |

(``settings_table()`` writes this table; docs/environment.md holds it too.) ``wizard-3p-5r`` is a quick game to learn,
``wizard-4p`` the standard game. A setting is used by name:

- ``gymnasium.make("wizard_env/wizard-3p-5r-v1")``: the single-agent env (``WizardSingleAgentEnv``), the learner in
  one seat and the setting's opponents in the others. The id carries the env's version, as ``wizard_env/Wizard-v1``
  does; gymnasium also makes the id without ``-v1``, warning that it used the latest version.
- ``wizard_env.env(setting="wizard-4p-5r")``: the AEC env with the setting's rules (every seat is yours to fill).
- ``wizard eval --setting wizard-3p-5r --agents X``: X in one seat and the setting's opponents in the others, on
  duplicate deals; ``--agents`` names that one agent, and the variant options (``--players``, ...) are refused.
- ``WizardVecEnv(num_envs, setting="wizard-3p-5r")``, ``wizard train``, ``wizard train-values``, ``wizard simulate``
  and ``wizard baseline`` with ``--setting NAME``: the setting's rules, and its opponents where the command has
  opponents. A VecEnv draws every opponent seat from a pool, so it takes a setting whose opponents are one agent
  spec (``opponent_spec``), as every setting here is.

A setting fixes the rules, and for the single-agent env the opponents too: giving a rule option (``num_players``,
``rounds``, ``bidding``, ``bid_total_rule``, ``foresight``), ``opponents`` or ``opponent_sampler`` beside it is a
ValueError naming the setting and the options, never a silent override, even for a value equal to the setting's.
The other options (``reward``, ``learner_seat``, ``render_mode``, ...) stay free. The opponents are agent specs,
built by the env; this module imports only the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from wizard_env.engine.rules import Rules


@dataclass(frozen=True)
class Setting:
    """A named benchmark setting: the rules of the game and the agents in the seats that are not the learner's."""

    name: str  #: the name the envs, gymnasium and ``wizard eval --setting`` take, such as ``wizard-3p-5r``
    num_players: int  #: players at the table, the learner included
    rounds: int  #: the game's rounds, dealt 1, 2, ... ``rounds`` cards (15 for four players is the standard game)
    bidding: str  #: who sees a bid when: ``open``, ``hidden`` or ``secret`` (``Bidding``)
    bid_total_rule: bool  #: plus/minus 1: the dealer may not make the bids add up to the tricks
    foresight: bool  #: in one-card rounds each player sees the others' cards, not their own
    opponents: tuple[str, ...]  #: agent specs for the other seats, the learner's left neighbour first

    def __post_init__(self) -> None:
        self.rules()  # ValueError for an impossible game
        if len(self.opponents) != self.num_players - 1:
            raise ValueError(f"setting {self.name!r}: {self.num_players} players need {self.num_players - 1} opponents, "
                             f"got {len(self.opponents)}")

    def rules(self) -> Rules:
        """The setting's rules."""
        return Rules.make(self.num_players, self.rounds, self.bidding, self.bid_total_rule, self.foresight)

    def opponent_spec(self) -> str:
        """The one agent spec of every opponent seat, for an opponent pool (``WizardVecEnv``, ``wizard train``), which
        draws each seat from the pool; ValueError for a setting whose seats hold different agents, which a pool
        cannot seat as the setting does."""
        if len(set(self.opponents)) != 1:
            raise ValueError(f"setting {self.name!r} seats different opponents ({', '.join(self.opponents)}), and an "
                             "opponent pool draws every seat alike: it plays in the single-agent env and wizard eval")
        return self.opponents[0]

    @property
    def gymnasium_id(self) -> str:
        """The gymnasium id of the single-agent env in this setting: ``GYMNASIUM_ID``'s namespace and version."""
        return f"wizard_env/{self.name}-v1"


#: The settings by name, small to large.
SETTINGS: dict[str, Setting] = {
    setting.name: setting
    for setting in (
        Setting("wizard-3p-5r", 3, 5, "open", False, False, ("rule",) * 2),
        Setting("wizard-4p-5r", 4, 5, "open", False, False, ("rule",) * 3),
        Setting("wizard-4p", 4, 15, "open", False, False, ("rule",) * 3),
    )
}


def get_setting(name: str) -> Setting:
    """The setting called ``name``; ValueError naming the known settings for any other name."""
    if not isinstance(name, str) or name not in SETTINGS:
        raise ValueError(f"unknown setting {name!r}: the settings are {', '.join(SETTINGS)}")
    return SETTINGS[name]


def rules_for(setting: str | None, options: dict[str, Any]) -> Rules:
    """The rules of ``setting``, or with none those of ``options`` (``Rules.make``'s arguments by name, None where not
    given: those default as in ``Rules.make``); ValueError for an unknown setting or a setting with options."""
    return env_setting(setting, options, {})[0]


def env_setting(setting: str | None, rule_options: dict[str, Any],
                opponent_options: dict[str, Any]) -> tuple[Rules, Setting | None]:
    """An env's rules and setting: with ``setting``, its rules once every option of ``rule_options`` and
    ``opponent_options`` given (not None) is refused beside it; without, the rules of ``rule_options`` (``Rules.make``'s
    arguments by name, None where not given)."""
    if setting is None:
        return Rules.make(**{name: value for name, value in rule_options.items() if value is not None}), None  # checks each
    fixed = get_setting(setting)
    refuse_beside(fixed, [name for name, value in {**rule_options, **opponent_options}.items() if value is not None])
    return fixed.rules(), fixed


def refuse_beside(setting: Setting, given: Sequence[str]) -> None:
    """ValueError naming the options in ``given`` that cannot come with ``setting``, which fixes them (none: nothing)."""
    if given:
        raise ValueError(f"setting {setting.name!r} fixes the game: {', '.join(given)} cannot be given beside it "
                         "(give the setting alone, or the options without it)")


def settings_table() -> str:
    """The settings as a Markdown table (the module docstring's and docs/environment.md's)."""
    rows = ["| setting | players | rounds | bidding | bid total rule | foresight | opponents | gymnasium id |",
            "| --- | ---: | --- | --- | --- | --- | --- | --- |"]
    for s in SETTINGS.values():
        rows.append(f"| `{s.name}` | {s.num_players} | 1..{s.rounds} | {s.bidding} | {'on' if s.bid_total_rule else 'off'} "
                    f"| {'on' if s.foresight else 'off'} | {', '.join(s.opponents)} | `{s.gymnasium_id}` |")
    return "\n".join(rows)
