import sys

from .cli import main

main()
sys.exit(0)
