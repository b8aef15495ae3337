"""The Interactions view: conversations and their state machine."""
