"""graspline drivers (see docs/design.md)."""
