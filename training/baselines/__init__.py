"""From-scratch baselines (``wizard baseline ALGO``): standard algorithms learning a setting without RuleAgent's help.

One module per algorithm, each reading top to bottom (``dmc``, ``dqn``, ``nfsp``, ``nfsp_self``; ``maskable_ppo``
runs ``wizard train``'s MaskablePPO with no advice and no cloning, ``values`` runs ``wizard train-values``' action
values with no advice); ``common`` holds the run's folder, budget and curve. docs/baselines.md has the commands and
the results.
"""
