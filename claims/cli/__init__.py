"""The ``ldsicl`` command: its parser and ``main`` (:mod:`claims.cli.main`), what kappa, train,
optimum and report do (:mod:`claims.cli.commands`), what runs and cache list / clear / export do
(:mod:`claims.cli.cache_commands`), what sweep does (:mod:`claims.cli.sweep_command`), and what the commands share -- a bad argument as an error
carrying the parameter it names, its one-line report, the check of an output file
(:mod:`claims.cli.shared`)."""
