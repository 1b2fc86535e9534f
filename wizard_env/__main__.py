"""``python -m wizard_env`` runs the ``wizard`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
