"""The networks by name: the few the package ships and the lineage that stays in the repository.

The manifest ``pretrained/zoo.json``, installed with the package, lists every network: its name and the names it
also answers to (``aliases``: the old ``ppo`` names), its file, the file's sha256, whether the package ships it
(``shipped``), its model card and the recipe that rebuilds it (paths in the repository; absent where there is none).

| where | networks |
|---|---|
| ``pretrained/`` (in the package) | ``net`` (``net-v13``), ``net-v7`` (the network ``search`` plays), ``net-bid`` |
| ``zoo/`` of a clone of the repository (not in the package) | the lineage: ``net-v1`` ... ``net-v12`` but ``net-v7`` |

``network_file`` finds a network's file: a shipped one in the package; a lineage one in the folder named by the
environment variable ``WIZARD_ZOO``, then in the ``zoo/`` folder next to the package's source (an editable install
of a clone), checked against the manifest's sha256. Without either it fails with one line saying how to get it.

``python -m wizard_env.agents.zoo_tool manifest`` writes the manifest again from the files (after a network is added
or rewritten); ``python -m wizard_env.agents.zoo_tool portable FILE ...`` rewrites checkpoints' configs so that their
sources name nothing of the machine they were trained on (``checkpoint.portable_sources``), weights untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from wizard_env.util.files import write_atomic

#: The folder of the shipped networks and of the manifest.
PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
MANIFEST = PRETRAINED_DIR / "zoo.json"
#: The lineage's folder in a clone of the repository (absent from an installed wheel).
CLONE_ZOO = Path(__file__).resolve().parent.parent / "zoo"
#: The environment variable naming a folder that holds lineage networks.
ZOO_VARIABLE = "WIZARD_ZOO"
REPOSITORY = "the wizard_env repository"


@dataclass(frozen=True)
class Network:
    """One network of the manifest."""

    name: str  #: the name that plays it (``net-v3``)
    aliases: tuple[str, ...]  #: other names that play it (``ppo-v3``; ``net`` for the best)
    file: str  #: its file name, in ``pretrained/`` where shipped, in ``zoo/`` otherwise
    sha256: str  #: of the whole file
    shipped: bool  #: whether the package installs it
    card: str | None  #: its model card, a path in the repository
    recipe: str | None  #: the recipe that rebuilds it, a path in the repository

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


def read_manifest(path: Path = MANIFEST) -> tuple[Network, ...]:
    """The networks the manifest lists, in its order."""
    data = json.loads(path.read_text())
    return tuple(Network(name=n["name"], aliases=tuple(n.get("aliases", ())), file=n["file"], sha256=n["sha256"],
                         shipped=bool(n["shipped"]), card=n.get("card"), recipe=n.get("recipe"))
                 for n in data["networks"])


NETWORK_LIST: tuple[Network, ...] = read_manifest()
#: Every name and alias -> its network: the ``net`` names first, then the old ``ppo`` ones.
BY_NAME: dict[str, Network] = {
    **{name: n for n in NETWORK_LIST for name in (*n.aliases, n.name) if not name.startswith("ppo")},
    **{name: n for n in NETWORK_LIST for name in n.names if name.startswith("ppo")},
}
#: File name -> its network's name (``wizard-v3.npz`` -> ``net-v3``).
BY_FILE: dict[str, str] = {n.file: n.name for n in NETWORK_LIST}


def in_short(names: Iterable[str], sep: str = ", ") -> str:
    """``names`` for a message: the networks' old ``ppo`` aliases left out, ``net-v1`` ... ``net-v13`` as a range."""
    kept = [n for n in names if not n.startswith("ppo")]
    versions = sorted(int(n[5:]) for n in kept if n.startswith("net-v"))
    if len(versions) > 2:
        at = next(i for i, n in enumerate(kept) if n.startswith("net-v"))
        kept = [n for n in kept if not n.startswith("net-v")]
        kept.insert(at, f"net-v{versions[0]}..net-v{versions[-1]}")
    return sep.join(kept)


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def zoo_folders() -> list[Path]:
    """Where lineage networks are looked for, in order: ``$WIZARD_ZOO``, then the clone's ``zoo/``."""
    named = os.environ.get(ZOO_VARIABLE)
    return ([Path(named)] if named else []) + [CLONE_ZOO]


_checked: dict[tuple[str, int, int], bool] = {}  # (path, size, mtime) of files whose sha256 matched


def network_file(name: str) -> Path:
    """The file of the network ``name`` (a name or alias of the manifest); KeyError for another name, ValueError
    (one line) for a lineage network that no zoo folder holds or whose file is not the manifest's."""
    net = BY_NAME[name]
    if net.shipped:
        return PRETRAINED_DIR / net.file
    for folder in zoo_folders():
        path = folder / net.file
        if path.is_file():
            stat = path.stat()
            key = (str(path), stat.st_size, stat.st_mtime_ns)
            if key not in _checked:
                found = sha256(path)
                if found != net.sha256:
                    raise ValueError(f"{path}: sha256 {found}, but the zoo's manifest lists {net.file} with sha256 "
                                     f"{net.sha256}: not the network {name}")
                _checked[key] = True
            return path
    where = os.environ.get(ZOO_VARIABLE)
    held = f" ({ZOO_VARIABLE}={where} does not hold it)" if where else ""
    raise ValueError(f"agent {name!r}: its network {net.file} is not installed with the package: clone {REPOSITORY} "
                     f"and use the clone (its zoo/ folder holds it), or set {ZOO_VARIABLE} to a folder holding "
                     f"{net.file}{held}")


class Networks(Mapping[str, Path]):
    """Every network name and alias -> its checkpoint file, found when asked (``network_file``), so that a name of
    the lineage costs nothing until it is played."""

    def __getitem__(self, name: str) -> Path:
        return network_file(name)

    def __contains__(self, name: object) -> bool:
        return name in BY_NAME

    def __iter__(self) -> Iterator[str]:
        return iter(BY_NAME)

    def __len__(self) -> int:
        return len(BY_NAME)


NETWORKS = Networks()


def manifest_entries(networks: Sequence[Network], root: Path) -> list[dict]:
    """The manifest's JSON entries for ``networks``, each file's sha256 read again from ``root`` (the repository)."""
    entries = []
    for n in networks:
        path = root / ("agents/pretrained" if n.shipped else "zoo") / n.file
        entry = {"name": n.name, "aliases": list(n.aliases), "file": n.file, "sha256": sha256(path), "shipped": n.shipped}
        entry.update({k: v for k, v in (("card", n.card), ("recipe", n.recipe)) if v})
        entries.append(entry)
    return entries


def write_manifest(root: Path, path: Path = MANIFEST) -> Path:
    """Write the manifest again with the sha256 of the files in the repository at ``root``."""
    entries = manifest_entries(read_manifest(path), root)
    text = '{"networks": [\n' + ",\n".join(f"  {json.dumps(e)}" for e in entries) + "\n]}\n"  # a network a line
    return write_atomic(path, lambda f: f.write(text))
