"""``python -m wizard_env`` runs the ``wizard`` command."""

from wizard_env.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
