"""The environments over the engine: the PettingZoo AEC env (``aec``), one learner's seat as a Gymnasium env
(``single_agent``) and as stable-baselines3 VecEnvs (``vec_env`` with its ``opponent_pool``, ``mixed_vec_env``), and the
named benchmark settings they take (``settings``)."""
