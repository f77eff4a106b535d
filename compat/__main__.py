"""`python -m compat` is the `compat` command."""

from compat.cli import main

if __name__ == "__main__":
    main()
