"""Developer tools behind the CLI's `bench` and `soak` subcommands: measuring and soak-testing
the engine. Nothing in the engine or the app imports them at run time."""
