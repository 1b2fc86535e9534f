"""Optional extras of the package: a check that names the missing package and the command that installs it.

What needs an extra imports it lazily, where it is first used, so ``import wizard_env`` and
``wizard --help`` load none of them.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Mapping, Sequence


class MissingExtra(ImportError):
    """An optional package is not installed; the message names it and the command that installs it."""


def install_command(extra: str) -> str:
    """The command that installs ``extra`` into a clone of the project."""
    return f"pip install -c constraints.txt -e '.[{extra}]'"


def require_extra(extra: str, packages: Sequence[str] | Mapping[str, str], user: str) -> None:
    """MissingExtra naming the first of ``packages`` that is not installed; nothing is imported.

    ``packages`` are import names, or a mapping of import names to the names the message gives (``{"PIL": "pillow"}``).
    """
    shown = packages if isinstance(packages, Mapping) else {package: package for package in packages}
    for package, name in shown.items():
        if find_spec(package) is None:
            raise MissingExtra(f"{user} needs {name}, from the {extra} extra: {install_command(extra)}")
