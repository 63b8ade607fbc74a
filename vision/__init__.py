"""graspline vision (see DESIGN.md)."""
