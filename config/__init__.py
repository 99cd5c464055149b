"""Built-in configuration shipped with the package (voice presets)."""
