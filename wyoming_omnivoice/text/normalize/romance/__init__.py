"""Romance languages: French, Spanish, Italian, Portuguese (European and Brazilian),
Romanian."""
