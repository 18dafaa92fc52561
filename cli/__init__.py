"""The `perfalign` command line: one module per command group, apart from the flows it starts."""
