"""The application on top of the library: the command line and the environment self-check."""
