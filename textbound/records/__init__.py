"""Records: the audit log, ratings, traces and access keys."""
