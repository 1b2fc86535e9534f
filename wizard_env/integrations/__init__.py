"""Bridges to other libraries: Ray RLlib (``rllib``), Tianshou (``tianshou_marl``), per-seat rewards for TorchRL and
Tianshou (``adapters``) and OpenSpiel (``openspiel_game``). Each needs its optional extra."""
