"""`python -m textbound.serving.cli`: the same command line as the `textbound` script."""

from textbound.serving.cli import main

if __name__ == "__main__":  # pragma: no cover - importing this module runs nothing
    main()
