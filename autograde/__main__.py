import sys

from .cli import console, main

sys.exit(console(main))
