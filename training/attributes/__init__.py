"""Derive the attribute check's synonym table from labelled training questions."""
