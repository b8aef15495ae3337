"""The main window: its layout, docks, compare mode and reports."""
