"""Scores: explicit pass/fail criteria plus continuous errors per experiment (RR-7317 section 4.2)."""
