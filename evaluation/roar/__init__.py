"""ROAR and Recursive ROAR: config, masking, measures, retraining, the study as job cells, scores, artifacts."""
