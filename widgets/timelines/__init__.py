"""The Timelines view: score, stress and level plots per NPC."""
