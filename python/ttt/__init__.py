"""ttt Python package."""
