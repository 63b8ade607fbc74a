"""graspline offline_sim (see DESIGN.md)."""
