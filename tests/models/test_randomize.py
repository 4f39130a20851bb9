"""Copy-on-write model randomization (models/randomize.py) on tiny BERT, RoBERTa, DistilBERT and GPT-2 models
built in code: the stages come from the architecture table, the shared model is never touched (bit for bit),
only the chosen units change, the re-initializations have the distributions they claim, cascading reuses the
previous stage, and memory stays at two copies of the weights at most."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    DistilBertConfig,
    DistilBertForSequenceClassification,
    GPT2Config,
    GPT2ForSequenceClassification,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaForSequenceClassification,
)

from models import TextClassifier, randomize
from models.architectures import get_module, read_architecture
from models.errors import ModelError

WORDS = "the movie was a film that this story had some scenes excellent awful good bad great boring fun".split()
SENTENCE = "the movie was excellent and the story had some good scenes"


def _tokenizer(specials: list[str], template: str | None, pad: str, unk: str) -> PreTrainedTokenizerFast:
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=unk))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if template is not None:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=template, pair=template.replace("$A", "$A $B:1"),
            special_tokens=[(t, vocab[t]) for t in specials if t in template])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token=pad, unk_token=unk)


def _bert():
    tok = _tokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]"], "[CLS] $A [SEP]", "[PAD]", "[UNK]")
    config = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2, num_labels=2)
    return BertForSequenceClassification(config), tok


def _roberta():
    tok = _tokenizer(["<s>", "<pad>", "</s>", "<unk>"], "<s> $A </s>", "<pad>", "<unk>")
    config = RobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=64, max_position_embeddings=66, type_vocab_size=1, pad_token_id=1,
                           bos_token_id=0, eos_token_id=2, num_labels=2)
    return RobertaForSequenceClassification(config), tok


def _distilbert():
    tok = _tokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]"], "[CLS] $A [SEP]", "[PAD]", "[UNK]")
    config = DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                              max_position_embeddings=64, pad_token_id=0, num_labels=2)
    return DistilBertForSequenceClassification(config), tok


def _gpt2():
    tok = _tokenizer(["<|endoftext|>"], None, "<|endoftext|>", "<|endoftext|>")
    config = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=64, num_labels=2,
                        pad_token_id=0, bos_token_id=0, eos_token_id=0)
    return GPT2ForSequenceClassification(config), tok


BUILDERS = {"bert": _bert, "roberta": _roberta, "distilbert": _distilbert, "gpt2": _gpt2}


@pytest.fixture(scope="module", params=list(BUILDERS))
def tiny(request) -> TextClassifier:
    torch.manual_seed(0)
    model, tokenizer = BUILDERS[request.param]()
    model.config._attn_implementation = "eager"
    return TextClassifier(model.eval(), tokenizer, name=f"tiny-{request.param}", device="cpu")


def _snapshot(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _params_under(model, paths) -> dict[str, torch.Tensor]:
    out = {}
    for name, parameter in model.named_parameters():
        if any(name == p or name.startswith(p + ".") for p in paths):
            out[name] = parameter
    return out


# What the hand-written architecture table said before the module-tree rule replaced it: the rule must
# find the same blocks, embeddings and head.
FORMER_TABLE = {
    "bert": ("bert.encoder.layer", ("bert.embeddings",), ("bert.pooler", "classifier")),
    "roberta": ("roberta.encoder.layer", ("roberta.embeddings",), ("classifier",)),
    "distilbert": ("distilbert.transformer.layer", ("distilbert.embeddings",), ("pre_classifier", "classifier")),
    "gpt2": ("transformer.h", ("transformer.wte", "transformer.wpe"), ("transformer.ln_f", "score")),
}


def test_stages_come_from_the_architecture_table(tiny):
    arch = read_architecture(tiny.model)
    assert tiny.architecture == arch
    assert (arch.blocks, arch.embeddings, arch.head) == FORMER_TABLE[tiny.model.config.model_type]
    names = [s.name for s in randomize.stages(tiny)]
    assert names == ["head", "block 1", "block 0", "embeddings"]
    assert randomize.stage_names(tiny) == ["original"] + names
    stages = randomize.stages(tiny)
    assert stages[0].paths == tuple(p for p in arch.head if get_module(tiny.model, p) is not None)
    assert stages[1].paths == (f"{arch.blocks}.1",) and stages[2].paths == (f"{arch.blocks}.0",)
    assert stages[3].paths == arch.embeddings
    # every parameter of the model belongs to exactly one stage (nothing is left out, nothing counted twice)
    owned = [n for s in stages for n in _params_under(tiny.model, s.paths)]
    assert sorted(owned) == sorted(n for n, _ in tiny.model.named_parameters())


@pytest.mark.parametrize("mode", ["cascading", "independent"])
@pytest.mark.parametrize("init", ["model", "normal"])
def test_only_the_chosen_units_change_and_the_original_is_untouched(tiny, mode, init):
    before = _snapshot(tiny.model)
    fingerprint = tiny.fingerprint
    encoding = tiny.encode(SENTENCE)
    logits = tiny.predict_logits([encoding])
    stages = randomize.stages(tiny)
    for stage in stages:
        randomized = randomize.randomized(tiny, stage.name, mode=mode, init=init, seed=3)
        changed_paths = [p for s in stages[: stage.index + 1] for p in s.paths] if mode == "cascading" \
            else list(stage.paths)
        inside = _params_under(randomized.model, changed_paths)
        originals = dict(tiny.model.named_parameters())
        for name, parameter in randomized.model.named_parameters():
            if name in inside:
                assert parameter.data_ptr() != originals[name].data_ptr(), name  # a private copy
                if parameter.dim() == 2 or init == "normal":  # weight matrices always get new values
                    assert not torch.equal(parameter, originals[name]), name
            else:
                assert parameter.data_ptr() == originals[name].data_ptr(), name  # shared, not copied
        assert randomized.fingerprint != fingerprint
        assert randomized.tokenizer is tiny.tokenizer
    assert _same(before, _snapshot(tiny.model))  # bit for bit
    assert tiny.fingerprint == fingerprint
    assert np.array_equal(tiny.predict_logits([encoding]), logits)
    # the hash of the weights themselves is unchanged too (not just the memoized fingerprint)
    fresh = TextClassifier(tiny.model, tiny.tokenizer, name="again", device="cpu")
    assert fresh.fingerprint == fingerprint


def test_cascading_reuses_the_previous_stage_and_matches_direct_randomization(tiny):
    chain = list(randomize.cascade(tiny, init="model", seed=5))
    assert [s.name for s, _ in chain] == [s.name for s in randomize.stages(tiny)]
    for (stage, through), (_, previous) in zip(chain[1:], chain[:-1]):
        # the units randomized at earlier stages are the same tensors as in the previous stage (reused, not redone)
        earlier = [p for s in randomize.stages(tiny)[: stage.index] for p in s.paths]
        mine = _params_under(through.model, earlier)
        theirs = _params_under(previous.model, earlier)
        assert mine and all(mine[n].data_ptr() == theirs[n].data_ptr() for n in mine)
    for stage, through in chain:
        direct = randomize.randomized(tiny, stage.name, mode="cascading", init="model", seed=5)
        assert _same(_snapshot(direct.model), _snapshot(through.model))
        assert direct.fingerprint == through.fingerprint


def _storage_bytes(models_) -> int:
    seen, total = set(), 0
    for model in models_:
        for tensor in list(model.parameters()) + list(model.buffers()):
            storage = tensor.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
    return total


@pytest.mark.parametrize("mode", ["cascading", "independent"])
def test_a_whole_family_costs_at_most_one_extra_copy(tiny, mode):
    randomize.clear_cache()
    family = randomize.family(tiny, mode=mode, init="model", seed=0)
    assert randomize.family(tiny, mode=mode, init="model", seed=0) is family  # reused, not rebuilt
    one = _storage_bytes([tiny.model])
    everything = _storage_bytes([tiny.model] + [m.model for _, m in family])
    assert everything <= 2 * one
    # a naive cascade (a deep copy per stage, as Quantus does) would hold one copy per stage
    assert len(family) * one > 2 * one
    randomize.clear_cache()


def test_model_initialization_follows_the_config(tiny):
    randomized = randomize.randomized(tiny, "block 0", mode="independent", init="model", seed=1)
    path = randomize.stages(tiny)[2].paths[0]
    block = get_module(randomized.model, path)
    std = tiny.model.config.initializer_range
    linear = {name: m for name, m in block.named_modules()
              if isinstance(m, torch.nn.Linear) or type(m).__name__ == "Conv1D"}
    # GPT-2 scales its residual projections by 1/sqrt(2 n_layer) (modeling_gpt2 _init_weights, GPT-2 paper)
    scaled = {n for n in linear if tiny.model.config.model_type == "gpt2" and n.endswith("c_proj")}
    weights = torch.cat([m.weight.flatten() for n, m in linear.items() if n not in scaled])
    assert weights.std().item() == pytest.approx(std, rel=0.15)  # N(0, initializer_range), within sampling error
    assert abs(weights.mean().item()) < 4 * std / math.sqrt(weights.numel())
    if scaled:
        projections = torch.cat([linear[n].weight.flatten() for n in scaled])
        expected = std / math.sqrt(2 * tiny.model.config.n_layer)
        assert projections.std().item() == pytest.approx(expected, rel=0.15)
    norms = [m for m in block.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert norms and all(torch.equal(n.weight, torch.ones_like(n.weight)) for n in norms)
    assert all(torch.equal(n.bias, torch.zeros_like(n.bias)) for n in norms)


def test_normal_initialization_is_standard_normal_everywhere(tiny):
    randomized = randomize.randomized(tiny, "block 1", mode="independent", init="normal", seed=2)
    path = randomize.stages(tiny)[1].paths[0]
    values = torch.cat([p.flatten() for p in get_module(randomized.model, path).parameters()])
    assert values.numel() > 5000
    assert values.mean().item() == pytest.approx(0.0, abs=4 / math.sqrt(values.numel()))
    assert values.std().item() == pytest.approx(1.0, abs=0.05)
    norms = [m for m in get_module(randomized.model, path).modules() if isinstance(m, torch.nn.LayerNorm)]
    assert all(not torch.equal(n.weight, torch.ones_like(n.weight)) for n in norms)  # paper 003: LayerNorm too


def test_seeds_are_deterministic_and_distinct(tiny):
    a = randomize.randomized(tiny, "embeddings", mode="independent", init="normal", seed=7)
    b = randomize.randomized(tiny, "embeddings", mode="independent", init="normal", seed=7)
    c = randomize.randomized(tiny, "embeddings", mode="independent", init="normal", seed=8)
    assert _same(_snapshot(a.model), _snapshot(b.model)) and a.fingerprint == b.fingerprint
    assert not _same(_snapshot(a.model), _snapshot(c.model)) and a.fingerprint != c.fingerprint
    fingerprints = {randomize.randomized_fingerprint(tiny.fingerprint, mode, stage, init, seed)
                    for mode in randomize.MODES for stage in ("head", "block 0") for init in randomize.INITS
                    for seed in (0, 1)}
    assert len(fingerprints) == 16


def test_head_randomization_is_xavier_on_the_last_weight_only(tiny):
    before = _snapshot(tiny.model)
    path, layer = randomize.head_output_layer(tiny)
    randomized = randomize.randomize_head(tiny, seed=0)
    new_layer = get_module(randomized.model, path)
    fan_out, fan_in = layer.weight.shape
    bound = math.sqrt(6.0 / (fan_in + fan_out))  # Glorot & Bengio 2010, uniform(-bound, bound)
    assert not torch.equal(new_layer.weight, layer.weight)
    assert new_layer.weight.abs().max().item() <= bound
    assert new_layer.weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.3)
    if layer.bias is not None:
        assert new_layer.bias.data_ptr() == layer.bias.data_ptr()  # the bias is unchanged (paper 000)
    for name, parameter in randomized.model.named_parameters():
        if name != f"{path}.weight":
            assert parameter.data_ptr() == dict(tiny.model.named_parameters())[name].data_ptr(), name
    again = randomize.randomize_head(tiny, seed=0)
    other = randomize.randomize_head(tiny, seed=1)
    assert torch.equal(get_module(again.model, path).weight, new_layer.weight)
    assert not torch.equal(get_module(other.model, path).weight, new_layer.weight)
    assert len({randomized.fingerprint, other.fingerprint, tiny.fingerprint}) == 3
    assert _same(before, _snapshot(tiny.model))


def test_randomized_models_predict_and_explain(tiny):
    from explainers import create

    encoding = tiny.encode(SENTENCE)
    for _stage, model in randomize.cascade(tiny, init="normal", seed=0):
        probabilities = model.predict_proba([encoding])[0]
        assert probabilities.shape == (2,) and probabilities.sum() == pytest.approx(1.0)
        explanation = create("input_x_gradient").explain(model, encoding, 0)
        assert explanation.word_scores.shape == (encoding.n_words,) and np.isfinite(explanation.word_scores).all()
        assert explanation.provenance["model"]["fingerprint"] == model.fingerprint


def test_unknown_inputs_give_clear_errors(tiny):
    with pytest.raises(ModelError, match="Unknown stage 'block 9'"):
        randomize.randomized(tiny, "block 9")
    with pytest.raises(ModelError, match="Unknown randomization mode"):
        randomize.randomized(tiny, "head", mode="sideways")
    with pytest.raises(ModelError, match="Unknown initialization"):
        randomize.randomized(tiny, "head", init="zeros")
    with pytest.raises(ModelError, match="Unknown head initialization"):
        randomize.randomize_head(tiny, 0, init="kaiming")


def test_a_model_outside_the_table_is_refused_with_a_message(random_classifier):
    other = TextClassifier(random_classifier.model, random_classifier.tokenizer, name="odd", device="cpu")
    other.architecture = None  # e.g. a model type nobody added to models/architectures.py
    with pytest.raises(ModelError, match="no entry in the architecture table"):
        randomize.stages(other)


def _more_types():
    from transformers import (
        CamembertConfig,
        CamembertForSequenceClassification,
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        ElectraConfig,
        ElectraForSequenceClassification,
        MPNetConfig,
        MPNetForSequenceClassification,
    )

    common = dict(vocab_size=40, hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=64)
    return {
        "deberta-v2": lambda: DebertaV2ForSequenceClassification(DebertaV2Config(
            **common, max_position_embeddings=64, relative_attention=True, pos_att_type=["p2c", "c2p"],
            position_buckets=8, norm_rel_ebd="layer_norm")),
        "mpnet": lambda: MPNetForSequenceClassification(MPNetConfig(**common, max_position_embeddings=66)),
        "camembert": lambda: CamembertForSequenceClassification(CamembertConfig(**common, max_position_embeddings=66)),
        "electra": lambda: ElectraForSequenceClassification(ElectraConfig(**common, embedding_size=16,
                                                                          max_position_embeddings=64)),
    }


@pytest.mark.parametrize("model_type", ["deberta-v2", "mpnet", "camembert", "electra"])
def test_more_model_types_are_fully_covered_by_the_table(model_type):
    torch.manual_seed(0)
    model = _more_types()[model_type]()
    classifier = TextClassifier(model.eval(), _bert()[1], name=model_type, device="cpu")
    before = _snapshot(classifier.model)
    stages = randomize.stages(classifier)
    assert [s.name for s in stages] == ["head", "block 2", "block 1", "block 0", "embeddings"]
    owned = [n for s in stages for n in _params_under(classifier.model, s.paths)]
    assert sorted(owned) == sorted(n for n, _ in classifier.model.named_parameters())  # each parameter once
    last = None
    for _, last in randomize.cascade(classifier, init="model", seed=0):  # noqa: B007 (the last stage, read after the loop)
        pass
    assert all(p.data_ptr() != q.data_ptr() for p, q in zip(last.model.parameters(), classifier.model.parameters()))
    assert _same(before, _snapshot(classifier.model))
