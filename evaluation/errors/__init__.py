"""Error analysis: the predictions table of a dataset, its filters and confusion matrix, explaining a
slice with the shortcut detector, and the minimal-flip counterfactual search."""
from evaluation.errors.counterfactual import MODES, Flip, minimal_flip, mlm_candidates
from evaluation.errors.filters import (
                                       FilterError,
                                       Filters,
                                       apply_filters,
                                       cell_rows,
                                       confident_errors_first,
                                       confusion,
                                       correct_rows,
)
from evaluation.errors.predictions import (
                                       LABELS_NEEDED,
                                       PredictionTable,
                                       dataset_hash,
                                       estimated_cost,
                                       predict_dataset,
                                       stored_run,
)
from evaluation.errors.slices import (
                                       SliceSummary,
                                       compare_words,
                                       explain_examples,
                                       pushing_words,
                                       shortcut_words,
                                       summarize_slice,
)

__all__ = ["FilterError", "Filters", "Flip", "LABELS_NEEDED", "MODES", "PredictionTable", "SliceSummary",
           "apply_filters", "cell_rows", "compare_words", "confident_errors_first", "confusion", "correct_rows",
           "dataset_hash", "estimated_cost", "explain_examples", "minimal_flip", "mlm_candidates", "predict_dataset", "pushing_words",
           "shortcut_words", "stored_run", "summarize_slice"]
