"""The MaskablePPO trainer (``wizard train``): its settings (``train_config``), the run (``train``), its resume
check (``train_resume``), the warm start (``warm_start``), RuleAgent's advice as an input (``advice``) and
the export of your own stable-baselines3 model (``export``).
"""
