"""The kinds of journal event the views mark and the tick bar steps between.

Each kind names a set of journal variants (save-format §5).
"""

#: Journal variants shown as markers and offered by "next event of this kind".
EVENT_KINDS = {
    "walk-away": {"InteractionWalkedAway", "InteractionConflictAbandoned"},
    "confrontation": {"InteractionConfrontation"},
    "penalty": {"WalkAwayPenalty"},
    "interaction": {"InteractionStarted"},
    "completed": {"InteractionCompleted"},
    "fact": {"FactLearned", "FactUpdated"},
    "relationship": {"RelationshipInteraction"},
    "monologue": {"MonologueFired"},
    "dialogue": {"DialogueLine"},
}
