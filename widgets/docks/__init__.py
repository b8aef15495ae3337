"""The dock panels around the views: NPCs, monologues, findings, journal, snapshot, content, differences, explain."""
