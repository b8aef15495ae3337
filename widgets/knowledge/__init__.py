"""The Knowledge graph view: the player's facts as a graph and a table."""
