"""The graph wiring: state, per-run context, routers and the builder."""
