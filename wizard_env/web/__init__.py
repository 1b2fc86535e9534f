"""The web table: ``wizard serve``'s replay viewer and play page (the app needs the ``web`` extra).

``tables`` holds the games played in the browser, ``limits`` what a client may ask of them (the agents
offered, the time per request) and ``library`` reads replay files for the viewer, all without a web
framework; ``app`` is the Starlette app over them. The command is ``wizard_env.cli.serve``.
"""
