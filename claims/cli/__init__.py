"""The ``ldsicl`` command: its parser (:mod:`claims.cli.main`) and what each subcommand does."""
