"""The graph's nodes, one module per node, each named after its function."""
