"""Training code for textbound's own models (the `train` extra; never imported at run time)."""
