"""graspline drivers (see DESIGN.md)."""
