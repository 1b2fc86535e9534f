"""The rollout-values trainer (``wizard train-values``): its settings (``values_config``), the run
(``train_values``), the rollouts (``rollout_values``, ``chunk_worker``, ``ray_collect``,
``opponent_pool``), the decisions they store (``samples``, ``sample_stream``), ``--zero``'s runs from the rules
alone (``zero``), and the recipe steps built on it: a fresh fit (``fit_values``) and the margin grid
(``margins``).
"""
