"""Evaluation on duplicate deals: ``evaluate`` (the method of ``wizard eval``), ``pairing`` (figures paired
by deal), ``eval_report`` (its tables, JSON and plot), ``eval_suite`` (a model card's battery), ``cards`` (the
model cards made from it), ``gate`` (``wizard train-values --gate``) and ``iteration_curve`` (``wizard eval-iterations``).
It imports no trainer.
"""
