"""Command-line sub-commands, one module each (cli.py adds them in this order)."""
from . import explain, methods, prepare

COMMANDS = [prepare, explain, methods]
