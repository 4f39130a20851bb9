"""Faithfulness: removal curves (comprehensiveness, sufficiency, deletion, insertion...), paper presets, the random
band, the bias matrix, the known-feature task, one-input runs and dataset reports."""
