"""Data shipped with the tool: the token tables (encodings/)."""
