"""Work off the GUI thread: loading, progress and freeing."""
