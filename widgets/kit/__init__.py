"""The pieces every view shares: tables, cell text, colours, plain text, slices."""
