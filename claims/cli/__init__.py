"""The ``ldsicl`` command: its parser and ``main`` (:mod:`claims.cli.main`), its option types
(:mod:`claims.cli.arguments`), what train does
(:mod:`claims.cli.commands`), what kappa, optimum and report do (:mod:`claims.cli.compute_commands`),
what runs and cache list / clear / export do (:mod:`claims.cli.cache_commands`), what sweep does
(:mod:`claims.cli.sweep_command`), the estimate of a command's time and memory and its budget
(:mod:`claims.cli.costs`), what ``--version`` prints -- the version, the commit and the training
code's digest, without torch (:mod:`claims.cli.sources`) -- and what the commands share -- a bad
argument as an error carrying the parameter it names, its one-line report, the check of an
output file (:mod:`claims.cli.shared`)."""
