"""graspline onboard (see DESIGN.md)."""
