"""Readouts: global observables computed from model responses (RR-7317 section 4.1)."""
