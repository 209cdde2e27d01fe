"""Figures for the Snakemake HTML report (matplotlib, Agg backend, deterministic)."""
