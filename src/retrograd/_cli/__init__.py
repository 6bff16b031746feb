"""The ``retrograd`` command's subcommands, one module each (``explain``, ``train``).

``retrograd/__main__.py`` only assembles them into one argument parser.
"""
