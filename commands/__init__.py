"""Command-line sub-commands, one module each, listed in the order `cli.py --help` shows them."""
from commands import evaluate, explain, known_feature, methods, prepare, prepare_mlm, roar, sanity

COMMANDS = [prepare, prepare_mlm, explain, methods, evaluate, known_feature, sanity, roar]
