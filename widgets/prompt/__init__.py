"""The Prompt preview view: the assembled LLM prompt and its parts."""
