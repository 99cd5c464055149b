"""Nordic languages: Swedish, Danish, Norwegian Bokmål (`shared`: "en"/"ett" agreement,
digit-style clock times, "kl.", the units named alike)."""
