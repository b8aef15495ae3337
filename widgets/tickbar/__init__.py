"""The tick bar: the tick field, the event strip and stepping."""
