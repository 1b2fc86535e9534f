"""An RLlib PPO module as a ``wizard-ppo/1`` checkpoint: the conversion of its weights to PPOAgent's layout.

``wizard train --backend rllib`` trains RLlib's ``ActionMaskingTorchRLModule`` with separate policy
and value encoders (``vf_share_layers=False``) and heads without hidden layers: the same network as
sb3-contrib's MaskablePPO ``MlpPolicy``, under other names:

=================================================  ==========================================
RLlib module                                       checkpoint (PPOAgent)
=================================================  ==========================================
``encoder.actor_encoder.net.mlp.{2i}``             ``mlp_extractor.policy_net.{2i}``
``pi.net.mlp.0``                                   ``action_net``
``encoder.critic_encoder.net.mlp.{2i}``            ``mlp_extractor.value_net.{2i}``
``vf.net.mlp.0``                                   ``value_net``
=================================================  ==========================================

``module_weights`` reads the layers from the module's ``torch.nn`` structure, not from the names
alone: every encoder must be Linear layers each followed by one ReLU or Tanh (the same kind
throughout), and each head one Linear layer; any other module (layer norm, a hidden head layer,
another activation, a shared encoder) is a ValueError, so a network PPOAgent would compute
differently is never written. The tests compare the export's logits with the module's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_POLICY, _VALUE = "mlp_extractor.policy_net", "mlp_extractor.value_net"


def _linears(sequential: Any, what: str, activations: dict[type, str]) -> tuple[list[Any], list[str]]:
    """The Linear layers of an MLP and the activation after each; ValueError for anything else."""
    import torch

    layers: list[Any] = []
    kinds: list[str] = []
    parts = list(sequential)
    for i, part in enumerate(parts):
        if isinstance(part, torch.nn.Linear):
            if layers and len(kinds) < len(layers):
                raise ValueError(f"{what}: two Linear layers without an activation between them")
            layers.append(part)
        elif type(part) in activations and len(kinds) < len(layers):
            kinds.append(activations[type(part)])
        else:
            raise ValueError(f"{what}: layer {i} is {type(part).__name__}; the checkpoint format holds Linear "
                             f"layers with {' or '.join(activations.values())} between them")
    return layers, kinds


def module_weights(module: Any) -> tuple[dict[str, np.ndarray], list[int], str]:
    """(weights under PPOAgent's names, hidden widths, activation) of an RLlib PPO torch module; ValueError
    for a network the checkpoint format cannot hold."""
    import torch

    activations = {torch.nn.ReLU: "relu", torch.nn.Tanh: "tanh"}
    encoder = getattr(module, "encoder", None)
    actor, critic = getattr(encoder, "actor_encoder", None), getattr(encoder, "critic_encoder", None)
    if actor is None or critic is None:
        raise ValueError("the module's encoder must have separate actor and critic encoders (vf_share_layers=False)")
    weights: dict[str, np.ndarray] = {}
    shapes = {}
    for name, enc, head, out in ((_POLICY, actor, module.pi, "action_net"), (_VALUE, critic, module.vf, "value_net")):
        layers, kinds = _linears(enc.net.mlp, f"{name} encoder", activations)
        if len(kinds) != len(layers) or len(set(kinds)) > 1:
            raise ValueError(f"{name} encoder: every Linear layer must be followed by the same activation, got {kinds}")
        head_layers, head_kinds = _linears(head.net.mlp, f"{out} head", activations)
        if len(head_layers) != 1 or head_kinds:
            raise ValueError(f"{out} head: expected one Linear layer (head_fcnet_hiddens=[]), got {len(head_layers)} "
                             f"and {len(head_kinds)} activations")
        for i, layer in enumerate(layers):
            weights[f"{name}.{2 * i}.weight"] = layer.weight.detach().cpu().numpy().astype(np.float32)
            weights[f"{name}.{2 * i}.bias"] = layer.bias.detach().cpu().numpy().astype(np.float32)
        weights[f"{out}.weight"] = head_layers[0].weight.detach().cpu().numpy().astype(np.float32)
        weights[f"{out}.bias"] = head_layers[0].bias.detach().cpu().numpy().astype(np.float32)
        shapes[name] = ([int(layer.out_features) for layer in layers], kinds[0] if kinds else "tanh")
    if shapes[_POLICY] != shapes[_VALUE]:
        raise ValueError(f"policy and value encoders differ ({shapes[_POLICY]} and {shapes[_VALUE]}); "
                         "the checkpoint format holds one hidden layout for both")
    hidden, activation = shapes[_POLICY]
    return weights, hidden, activation
