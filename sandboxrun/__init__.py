"""sandboxrun."""
