"""The command line, chattts-studio-cli: the entry point and its subcommands."""
