"""Recipes (``wizard recipe``): the TOML files of this folder, read and checked by ``recipe``, planned and
listed by ``recipe_plan`` and run by ``recipe_run``.
"""
