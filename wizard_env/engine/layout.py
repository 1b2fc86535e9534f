"""``python -m wizard_env.engine.layout`` prints the observation layout table (``observation.layout_table``).

A module of its own: ``python -m wizard_env.engine.observation`` would run a module the package has already
imported, which Python warns about (RuntimeWarning from runpy).
"""

from .observation import OBS_SIZE, layout_table

if __name__ == "__main__":
    print(f"OBS_SIZE = {OBS_SIZE}\n")
    print(layout_table())
