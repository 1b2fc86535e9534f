"""OracleAgent: ``pimc``'s search on the true deal, for measurement only (the ceiling of a player of hidden cards).

The oracle sees every hidden card: at each decision with more than one legal action it plays each legal action out
on a copy of the real game (``rollouts.rollout_values``: one world, the true one; ``pimc`` draws its worlds with
``determinize`` instead), every seat played to the end of the round by the rollout policy, and takes the action with
the best round score of the acting seat (ties: the lowest action id). The rollout policy is the network (``net``,
the default, or another shipped network by its name) or RuleAgent (``oracle:rollout=rule``: with three ``rule``
opponents it knows their policy too).

It reads hidden state, so no caller hands it a game by accident: it declares ``sees_hidden``, and plays only through
``act_hidden(batch, games)``, which ``training.evaluation.evaluate.play_games`` calls for such agents alone.
``act_games`` and ``act_batch`` refuse, and the registry builds it only for the evaluator
(``make_agent(spec, seed, sees_hidden=True)``): ``wizard eval`` and ``wizard eval-suite`` play it; the web table,
``wizard play``, ``wizard simulate`` and the learner envs refuse it (``HIDDEN_REFUSAL``).

Spec: ``oracle``, ``oracle:rollout=rule``, ``oracle:rollout=net-v7``.
"""

from __future__ import annotations

import numpy as np

from wizard_env.engine.batch import WizardBatch

from .pimc_agent import PIMCAgent
from .rollouts import rollout_values

#: Why an agent that sees hidden cards is refused anywhere but in evaluation (one line, after where it was asked for).
HIDDEN_REFUSAL = ("'oracle' sees every hidden card: it is for measurement only, and plays in wizard eval and "
                  "wizard eval-suite alone (anywhere else it would leak the hidden cards)")
#: The oracle's rollout policy unless its spec names one: the shipped network.
DEFAULT_ROLLOUT = "net"


def parse_options(arg: str | None) -> dict:
    """Keyword arguments of ``OracleAgent`` from a spec's options (``rollout=rule|net|net-v7|...``); ValueError naming
    any other option."""
    options = {"rollout": DEFAULT_ROLLOUT}
    for part in arg.split(":") if arg else []:
        key, sep, value = part.partition("=")
        if key != "rollout" or not sep:
            raise ValueError(f"agent spec 'oracle:{arg}': unknown option {part!r} (the oracle takes rollout=rule|net "
                             "or another shipped network; it searches one world, the true one)")
        options["rollout"] = value
    return options


class OracleAgent(PIMCAgent):
    """Chooses the action with the best round score played out on the true deal: it sees every hidden card."""

    name = "oracle"
    #: This agent reads the true deal: only the evaluator hands it a game (``act_hidden``).
    sees_hidden = True

    def __init__(self, rollout: str = DEFAULT_ROLLOUT, seed: int | np.random.Generator | None = None):
        super().__init__(samples=1, rollout=rollout, seed=seed)

    def act_games(self, batch: WizardBatch, games: np.ndarray) -> np.ndarray:
        """Refused: the oracle plays only where the evaluator hands it the true deal (``act_hidden``)."""
        raise ValueError(HIDDEN_REFUSAL)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Refused: an observation hides what the oracle plays by."""
        raise ValueError(HIDDEN_REFUSAL)

    def act_hidden(self, batch: WizardBatch, games: np.ndarray) -> np.ndarray:
        """A legal action [k] for the acting seat of each of ``games`` of ``batch`` (the real games, hidden cards and
        all), chosen by rollouts on the true deal."""
        return self._act(batch, games)

    def _search(self, batch: WizardBatch, games: np.ndarray, masks: np.ndarray, samples: int) -> np.ndarray:
        """The best action of each game: its acting seat's round score after each legal action, on the true deal."""
        values = rollout_values(batch, games, self.policy, masks)
        return np.where(masks != 0, values, -np.inf).argmax(axis=1)  # ties: the lowest action id
