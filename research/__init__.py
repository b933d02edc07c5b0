"""Research code and notes behind design decisions; not part of the shipped package."""
