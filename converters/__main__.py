"""`python -m evalconv`: the same entry point as the `evalconv` console script."""
from ._launch import main

if __name__ == "__main__":
    main()
