"""The command line: argument parsing, the commands and the terminal."""
