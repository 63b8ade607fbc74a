"""graspline calibration (see DESIGN.md)."""
