"""Serving: the HTTP server, the reader page, the command line, Studio's entry."""
