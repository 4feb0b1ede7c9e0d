"""One module per command; each function takes parsed options and returns an exit code."""
