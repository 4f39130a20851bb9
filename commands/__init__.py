"""Command-line sub-commands, one module each, listed in the order `cli.py --help` shows them."""
from commands import (
                      adversarial,
                      compare_models,
                      counterfactuals,
                      deletion_grid,
                      errors,
                      evaluate,
                      explain,
                      known_feature,
                      methods,
                      prepare,
                      prepare_aml,
                      prepare_ffid,
                      prepare_mlm,
                      report_card,
                      reproduce,
                      roar,
                      sanity,
                      sparsity,
)

COMMANDS = [prepare, prepare_mlm, prepare_aml, prepare_ffid, explain, methods, evaluate, known_feature, sanity, roar,
            adversarial, errors, counterfactuals, deletion_grid, sparsity, report_card, compare_models, reproduce]
