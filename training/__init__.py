"""Training code for textbound's own models (needs the `train` extra; never imported at run time)."""
