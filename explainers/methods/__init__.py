"""One file per explanation method, named after its registry id; importing this package registers them all."""
from explainers.methods import (aml, attention, attention_rollout, deeplift, ensemble, gradient_shap,  # noqa: F401
                                input_marginalization, input_x_gradient, integrated_gradients, kernel_shap,
                                leave_one_out, leave_one_out_fill, lime, lime_bert, marc, occlusion, partition_shap, random,
                                saliency, shapley_sampling, smoothgrad)
from explainers.methods import alti, sequential_integrated_gradients, value_zeroing  # noqa: F401  (they register)
from explainers.methods import input_marginalization_phrase  # noqa: F401  (it registers: paper 000 s. 7)
