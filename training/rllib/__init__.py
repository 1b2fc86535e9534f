"""The RLlib trainer (``wizard train --backend rllib``): its settings (``rllib_config``), the run
(``rllib_train``), joining or starting Ray (``rllib_cluster``) and the module's export (``rllib_export``).
"""
