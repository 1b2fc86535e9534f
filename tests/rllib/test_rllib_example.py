"""examples/rllib_ppo.py on a tiny budget: learning changes every layer of the policy, and no action falls
outside the acting seat's mask."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def test_the_rllib_example_learns_without_an_illegal_action(ray_local):
    spec = importlib.util.spec_from_file_location("rllib_ppo", ROOT / "examples" / "rllib_ppo.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules["rllib_ppo"] = example  # dataclasses look their module up by name
    spec.loader.exec_module(example)
    result = example.main(example.Args(iterations=2, steps=300, hidden=16))
    assert result.decisions == 600 and result.illegal == 0
    changed = [k for k in result.initial if not np.array_equal(result.initial[k], result.final[k])]
    assert {k for k in result.initial if k.endswith("weight")} <= set(changed)
