"""Recipes (``wizard recipe``): the TOML files of this folder, read and checked by ``recipe`` and run by
``recipe_run``.
"""
