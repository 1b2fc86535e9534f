"""What the web table lets a client do, and how it says no: the agents offered, the time per request, RequestError.

The agents are a fixed list of specs the operator chose at start, picked by clients by name or index.
A client never sends a spec of its own: a spec can name a checkpoint path (``ppo:PATH``) or a search budget
(``pimc:samples=N``), and both are the operator's (``wizard serve --opponents``). A choice that is not on the
list gets one refusal that names the offered agents and repeats nothing of what was sent, so a path sent
by a client is never opened and its answer tells nothing about the disk. A request spends at most
``MOVE_SECONDS`` (``wizard serve --move-seconds``) on the agents' moves: no agent starts a move after it, and
the answer is a 504 that keeps the moves made. No web framework is imported here.
"""

from __future__ import annotations

from typing import Any, Sequence

from wizard_env.agents.registry import make_agent, refuse_hidden

#: What ``wizard serve`` offers unless told otherwise; ``pimc`` is 16 samples with rule rollouts (milliseconds a move),
#: ``search`` the strongest search agent (the network as rollout policy, prior and bid model; tens of ms).
DEFAULT_OPPONENTS = ("rule", "ppo", "random", "pimc", "search")
#: Agents one server offers at most (the play page lists each in every seat's menu).
MAX_OFFERED = 32
#: Threads working on games and files at once; a request past them waits its time per request, then gets a 503.
MAX_WORKERS = 16
#: Seconds a request may spend on the agents' moves by default; past it the answer is 504 and the moves made are kept.
MOVE_SECONDS = 30.0


class RequestError(ValueError):
    """A request the web table refuses; ``status`` is its HTTP status (the message says why)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def too_slow(table_id: str) -> RequestError:
    """The 504 of a request whose agents did not finish in time: what was played is kept, and how to go on."""
    return RequestError(f"the agents did not finish their moves within this server's time per request; the moves "
                        f"made are kept, and asking for the table (GET /api/tables/{table_id}) goes on with the rest", 504)


def check_offered(specs: Sequence[str]) -> tuple[str, ...]:
    """The operator's offered specs, each built once to check it (ValueError naming an empty list or a bad or repeated spec)."""
    if isinstance(specs, str) or not specs:
        raise ValueError("offer at least one agent, such as rule,ppo")
    if len(specs) > MAX_OFFERED:
        raise ValueError(f"at most {MAX_OFFERED} agents can be offered, not {len(specs)}")
    seen: set[str] = set()
    for spec in specs:
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"an offered agent is a spec such as 'rule', not {spec!r:.40}")
        if spec in seen:
            raise ValueError(f"agent {spec!r} is offered twice")
        seen.add(spec)
        refuse_hidden(spec, f"offered agent {spec!r}")  # a client would play against the true deal
        try:
            make_agent(spec, 0)
        except (ValueError, OSError) as err:
            raise ValueError(f"offered agent {spec!r}: {err}") from None
    return tuple(specs)


def pick(offered: Sequence[str], chosen: Any, seats: int) -> tuple[str, ...]:
    """The specs of ``seats`` seats from a client's choice: one offered name or index for all, or one per seat
    (RequestError, starting with the field's name; a choice not offered is refused without repeating it)."""
    if isinstance(chosen, (str, int)):
        chosen = [chosen]
    if not isinstance(chosen, list) or not chosen:
        raise RequestError(f"opponents: expected a list of offered agents by name or index, such as {[offered[0]]}")
    if len(chosen) == 1:
        chosen = chosen * seats
    if len(chosen) != seats:
        raise RequestError(f"opponents: {seats} other seats need one agent each (or one for all), not {len(chosen)}")
    picked = []
    for k, choice in enumerate(chosen):
        if isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(offered):
            picked.append(offered[choice])
        elif isinstance(choice, str) and choice in offered:
            picked.append(choice)
        else:
            raise RequestError(f"opponents[{k}]: not an agent this table offers; choose by name or by index from 0: "
                             f"{', '.join(offered)}")
    return tuple(picked)
