"""West Germanic languages: English, German, Dutch."""
