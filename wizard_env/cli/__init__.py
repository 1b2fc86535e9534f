"""The ``wizard`` command: ``main`` (the entry point), ``common`` (what several commands share) and one module per subcommand."""
