"""The one configuration: the stage tables (``tables``) and their profiles (``profiles/*.toml``)."""
