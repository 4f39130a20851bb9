"""Any AutoModelForSequenceClassification: tiny random-weight models of sixteen architectures, saved with
save_pretrained and loaded the way a user's folder is (``load_classifier``), explained by every method, randomized
layer by layer and scored by a faithfulness metric; predictions checked against the Hugging Face model's own.

Encoders read [CLS], decoders (GPT-2, Llama, Qwen2, Mistral, Phi, Gemma) the pooled token (last non-pad, padded on
the left), encoder-decoders (BART, T5) the decoder state at the last </s>.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tiny_models import ARCHITECTURE_FAMILIES, family_tokenizer, save_tiny_architecture, tiny_architecture
from tolerances import float32_tolerance
from transformers import BertConfig, BertForSequenceClassification, BertModel, GPT2Config, GPT2LMHeadModel

import cli
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from explainers import REGISTRY, create
from models import ModelError, TextClassifier, UserFacingError, load_classifier, perturb, randomize, resolve_operator
from models.architectures import read_architecture
from models.errors import ArchitectureError

ARCHITECTURES = list(ARCHITECTURE_FAMILIES)
DECODERS = ["gpt2", "llama", "qwen2", "mistral", "phi", "gemma"]
ENCODER_DECODERS = ["bart", "t5"]
TEXT = "the movie was excellent , not boring"
PAIR = "a good film"
# methods that load the masked LM or optimize per input (MaRC): run on every architecture in the slow test only
HEAVY = {m for m, cls in REGISTRY.items() if cls.needs_mlm or cls.expensive}

_LOADED: dict[str, TextClassifier] = {}


def loaded(name: str, tmp_path_factory) -> TextClassifier:
    """The tiny model of ``name`` saved into a folder and loaded from it as a user's model (once per session)."""
    if name not in _LOADED:
        folder = tmp_path_factory.mktemp(name)
        _LOADED[name] = load_classifier(save_tiny_architecture(name, folder), device="cpu")
    return _LOADED[name]


@pytest.fixture(params=ARCHITECTURES)
def classifier(request, tmp_path_factory) -> TextClassifier:
    return loaded(request.param, tmp_path_factory)


def _encoding(classifier: TextClassifier):
    return classifier.encode(TEXT, PAIR)


def _hf_logits(classifier: TextClassifier, ids, types=None) -> np.ndarray:
    """The Hugging Face model's own logits for one unpadded input (its own read-out rule)."""
    kwargs = {"input_ids": torch.tensor([list(ids)])}
    if types is not None and classifier._uses_token_types:
        kwargs["token_type_ids"] = torch.tensor([list(types)])
    with torch.no_grad():
        return classifier.model(**kwargs).logits.double().numpy()[0]


# ----- every method, randomization, a faithfulness metric --------------------------------------------------------
def _explain_all(classifier, encoding, methods) -> dict[str, object]:
    """method -> Explanation, or the one-line message a method was skipped with."""
    out = {}
    for method in methods:
        try:
            out[method] = create(method).explain(classifier, encoding)
        except UserFacingError as error:
            out[method] = str(error)
    return out


def _check_explained(classifier, encoding, results: dict) -> None:
    no_mask = classifier.tokenizer.mask_token_id is None
    for method, result in results.items():
        if isinstance(result, str):  # skipped: only where a prepared artifact is missing, with the command to run
            assert method == "aml" and "prepare-aml" in result, f"{method} skipped: {result}"
            continue
        assert result.word_scores.shape == (encoding.n_words,), method
        assert np.isfinite(result.word_scores).all(), method
        provenance = result.provenance
        assert provenance["input"]["pooled_token"]["index"] == classifier.pooled_index(encoding)
        if provenance["removal_operator_requested"] == "mask" and no_mask:
            assert provenance["removal_operator"] == "delete", method
            assert any("has no [MASK] token" in w for w in result.warnings), method
        if classifier.causal and (result.family == "attention" or provenance["removal_operator"]):
            assert any("Causal model" in w for w in result.warnings), method


def test_every_method_explains_every_architecture(classifier):
    encoding = _encoding(classifier)
    results = _explain_all(classifier, encoding, [m for m in REGISTRY if m not in HEAVY])
    _check_explained(classifier, encoding, results)
    assert sum(not isinstance(r, str) for r in results.values()) >= len(results) - 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ARCHITECTURES)
def test_masked_lm_and_expensive_methods_explain_every_architecture(name, tmp_path_factory):
    classifier = loaded(name, tmp_path_factory)
    encoding = classifier.encode(TEXT)
    _check_explained(classifier, encoding, _explain_all(classifier, encoding, sorted(HEAVY)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "t5"])
def test_the_command_line_explains_with_all_methods_and_says_why_one_is_skipped(name, tmp_path, capsys):
    """`cli.py explain --methods all` on a user's folder: every registered method explains, except AML without its
    prepared attribution model, which is listed as skipped with the command that builds it."""
    folder = save_tiny_architecture(name, tmp_path / name)
    assert cli.main(["explain", "--model", folder, "--text", TEXT, "--methods", "all", "--json", "--no-cache"]) == 0
    report = json.loads(capsys.readouterr().out)
    explained = {e["method_id"] for e in report["explanations"]}
    assert explained | set(report["skipped"]) == set(REGISTRY)
    assert set(report["skipped"]) <= {"aml"} and all("prepare-aml" in m for m in report["skipped"].values())


def _owned(model, paths) -> list[str]:
    return [n for n, _ in model.named_parameters() if any(n == p or n.startswith(p + ".") for p in paths)]


def test_layer_randomization_covers_every_parameter_once_and_leaves_the_model_untouched(classifier):
    arch = read_architecture(classifier.model)
    stages = randomize.stages(classifier)
    n_blocks = sum(len(randomize.get_module(classifier.model, s)) for s in arch.all_stacks)
    assert sum(s.name.endswith(tuple(f"block {i}" for i in range(n_blocks))) for s in stages) == n_blocks
    owned = [n for s in stages for n in _owned(classifier.model, s.paths)]
    assert sorted(owned) == sorted(n for n, _ in classifier.model.named_parameters())  # each parameter once
    before = {k: v.clone() for k, v in classifier.model.state_dict().items()}
    encoding = _encoding(classifier)
    last = None
    for _, last in randomize.cascade(classifier, init="normal", seed=0):  # noqa: B007 (the last stage, read after the loop)
        pass
    assert all(p.data_ptr() != q.data_ptr() for p, q in zip(last.model.parameters(), classifier.model.parameters()))
    assert all(torch.equal(before[k], v) for k, v in classifier.model.state_dict().items())
    assert np.isfinite(last.predict_proba([encoding])).all()
    saliency = create("saliency").explain(last, encoding)  # a gradient method through the randomized copy
    assert np.isfinite(saliency.word_scores).all()
    head_path, _ = randomize.head_output_layer(classifier)
    changed = [n for n, p in zip(dict(classifier.model.named_parameters()),
                                 randomize.randomize_head(classifier, seed=1).model.parameters())
               if p.data_ptr() != dict(classifier.model.named_parameters())[n].data_ptr()]
    assert changed == [f"{head_path}.weight"]


def test_a_faithfulness_metric_on_every_architecture(classifier):
    """Comprehensiveness of paper 003 removes with [MASK]: where there is none it falls back to delete, exactly."""
    encoding = _encoding(classifier)
    scores = create("leave_one_out").explain(classifier, encoding).word_scores
    metric = BY_ID["comprehensiveness-003"]
    value = evaluate_scores(classifier, encoding, [metric], scores).values[metric.id]
    assert np.isfinite(value)
    if classifier.tokenizer.mask_token_id is None:
        deleted = evaluate_scores(classifier, encoding, [metric], scores, RemovalOptions(operator="delete"))
        assert value == deleted.values[metric.id]


# ----- predictions: the Hugging Face model's own read-out, batched or not --------------------------------------
def test_prediction_equals_the_hugging_face_model_and_batching_changes_nothing(classifier):
    encoding = _encoding(classifier)
    ours = classifier.predict_logits([encoding])[0]
    assert ours == pytest.approx(_hf_logits(classifier, encoding.input_ids, encoding.token_type_ids),
                                 abs=float32_tolerance(ours))
    keep = np.ones((4, encoding.n_words), dtype=bool)
    keep[1, 0] = keep[2, -1] = False
    keep[3, 1:4] = False
    batch = perturb(classifier, encoding, keep, "delete")  # rows of different lengths: padded in one batch
    batched = classifier.predict_logits(batch)
    for row, ids in enumerate(batch.input_ids):
        types = batch.token_type_ids[row] if batch.token_type_ids is not None else None
        expected = _hf_logits(classifier, ids, types)
        assert batched[row] == pytest.approx(expected, abs=float32_tolerance(expected))


def test_gradients_go_through_the_embeddings_of_every_architecture(classifier):
    """forward_embeds on another input's word embeddings equals the model on that input's ids (for BART and T5:
    the embeddings reach the encoder and, shifted, the decoder), and the zero operator equals zeroed embeddings."""
    encoding = _encoding(classifier)
    tensors = classifier.tensors(encoding)
    ids = tensors["input_ids"].clone()
    ids[0, encoding.token_word.index(2)] = ids[0, encoding.token_word.index(0)]  # another word, same layout
    with torch.no_grad():
        logits = classifier.forward_embeds(classifier.word_embeddings(ids), tensors["attention_mask"],
                                           tensors.get("token_type_ids")).double().numpy()[0]
    expected = _hf_logits(classifier, ids[0].tolist(), encoding.token_type_ids)
    assert logits == pytest.approx(expected, abs=float32_tolerance(expected))
    keep = np.ones((1, encoding.n_words), dtype=bool)
    keep[0, 2] = False
    zeroed = classifier.predict_logits(perturb(classifier, encoding, keep, "zero"))[0]
    embeds = classifier.word_embeddings(tensors["input_ids"]).clone()
    embeds[0, torch.as_tensor(encoding.token_word) == 2] = 0
    with torch.no_grad():
        direct = classifier.forward_embeds(embeds, tensors["attention_mask"],
                                           tensors.get("token_type_ids")).double().numpy()[0]
    assert zeroed == pytest.approx(direct, abs=float32_tolerance(direct))


# ----- decoders: the pooled token --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DECODERS)
def test_a_decoder_is_read_at_its_pooled_token_whatever_a_removal_writes(name, tmp_path_factory):
    classifier = loaded(name, tmp_path_factory)
    encoding = classifier.encode(TEXT)
    assert classifier.causal and classifier.pooled_index(encoding) == encoding.n_tokens - 1
    keep = np.ones((1, encoding.n_words), dtype=bool)
    keep[0, -1] = False  # the last word becomes the pad token
    batch = perturb(classifier, encoding, keep, "pad")
    ours = classifier.predict_logits(batch)[0]
    config = classifier.model.config
    pad = config.pad_token_id
    try:
        config.pad_token_id = -1  # no token is pad: Hugging Face reads the last position too
        expected = _hf_logits(classifier, batch.input_ids[0])
    finally:
        config.pad_token_id = pad
    moved = _hf_logits(classifier, batch.input_ids[0])  # its own rule: the token before the written pad
    assert ours == pytest.approx(expected, abs=float32_tolerance(expected))
    assert np.abs(ours - moved).max() > 100 * float32_tolerance(expected)


def test_an_input_ending_with_the_pad_token_is_read_before_it_as_hugging_face_does(tmp_path_factory):
    classifier = loaded("gpt2", tmp_path_factory)  # pad = eos = <|endoftext|>
    encoding = classifier.encode(TEXT + " <|endoftext|>")
    assert encoding.input_ids[-1] == classifier.model.config.pad_token_id
    assert classifier.pooled_index(encoding) == encoding.n_tokens - 2
    ours = classifier.predict_logits([encoding])[0]
    expected = _hf_logits(classifier, encoding.input_ids)
    assert ours == pytest.approx(expected, abs=float32_tolerance(expected))
    tensors = classifier.tensors(encoding)  # the gradient path reads the same token
    with torch.no_grad():
        through_embeddings = classifier.forward_embeds(classifier.word_embeddings(tensors["input_ids"]),
                                                       tensors["attention_mask"]).double().numpy()[0]
    assert through_embeddings == pytest.approx(expected, abs=float32_tolerance(expected))
    explanation = create("occlusion").explain(classifier, encoding)
    assert explanation.provenance["input"]["pooled_token"] == {
        "index": encoding.n_tokens - 2, "token": encoding.tokens[-2], "rule": "last token that is not the pad token"}


@pytest.mark.parametrize("name, ambiguous", [("gpt2", True), ("llama", True), ("qwen2", False), ("gemma", False),
                                             ("bert", False)])
def test_pad_equal_to_eos_is_named_in_the_models_warnings(name, ambiguous, tmp_path_factory):
    classifier = loaded(name, tmp_path_factory)
    pad, eos = classifier.model.config.pad_token_id, classifier.tokenizer.eos_token_id
    assert (classifier.causal and pad == eos) == ambiguous
    assert any("pad = eos" in w for w in classifier.warnings) == ambiguous


# ----- no [MASK]: a stated fallback --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt2", "llama", "qwen2", "t5"])
def test_without_a_mask_token_removal_falls_back_to_delete(name, tmp_path_factory):
    classifier = loaded(name, tmp_path_factory)
    encoding = classifier.encode(TEXT)
    operator, note = resolve_operator(classifier, "mask")
    assert operator.value == "delete" and "[MASK]" in note
    keep = np.random.default_rng(0).random((5, encoding.n_words)) > 0.5
    assert perturb(classifier, encoding, keep, "mask").input_ids == perturb(classifier, encoding, keep,
                                                                             "delete").input_ids
    lime = create("lime").explain(classifier, encoding)
    assert (lime.provenance["removal_operator_requested"], lime.provenance["removal_operator"]) == ("mask", "delete")
    assert lime.provenance["removal_fallback"] in lime.warnings


def test_an_operator_whose_token_exists_is_kept(tmp_path_factory):
    assert resolve_operator(loaded("bert", tmp_path_factory), "mask") == (resolve_operator.__globals__["Operator"]
                                                                          .MASK, None)


# ----- encoder-decoders --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ENCODER_DECODERS)
def test_an_encoder_decoder_gives_its_encoder_attentions_and_randomizes_both_stacks(name, tmp_path_factory):
    classifier = loaded(name, tmp_path_factory)
    encoding = _encoding(classifier)
    attention = classifier.attentions(encoding)
    layers = len(randomize.get_module(classifier.model, classifier.architecture.all_stacks[0]))
    assert attention.shape == (layers, 2, encoding.n_tokens, encoding.n_tokens)
    assert np.allclose(attention.sum(-1), 1.0, atol=1e-5)  # rows of softmax weights
    names = randomize.stage_names(classifier)
    assert names == ["original", "head", "decoder block 1", "decoder block 0", "decoder input", "encoder block 1",
                     "encoder block 0", "embeddings"]
    assert classifier.pooled_index(encoding) == encoding.n_tokens - 1  # the last </s>


# ----- bad input ----------------------------------------------------------------------------------------------------
def test_a_folder_without_a_classification_head_gets_a_message(tmp_path):
    tokenizer = family_tokenizer("wordpiece")
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(tmp_path / "encoder")
    tokenizer.save_pretrained(tmp_path / "encoder")
    with pytest.raises(ModelError, match="BertModel without a sequence-classification head"):
        load_classifier(str(tmp_path / "encoder"))
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=1, n_head=2)).save_pretrained(
        tmp_path / "lm")
    tokenizer.save_pretrained(tmp_path / "lm")
    with pytest.raises(ModelError, match="causal language model can classify only through a prompt"):
        load_classifier(str(tmp_path / "lm"))


class _NoStack(torch.nn.Module):
    """A classifier whose blocks are an nn.Sequential: no ModuleList for the rule to find."""

    def __init__(self, model):
        super().__init__()
        self.config = model.config
        self.embed = model.bert.embeddings.word_embeddings
        self.body = torch.nn.Sequential(*model.bert.encoder.layer)
        self.classifier = model.classifier

    def get_input_embeddings(self):
        return self.embed

    def forward(self, input_ids=None, attention_mask=None, **_):
        hidden = self.embed(input_ids)
        for block in self.body:
            hidden = block(hidden)[0] if isinstance(block(hidden), tuple) else block(hidden)
        return self.classifier(hidden[:, 0])


def test_a_model_whose_blocks_cannot_be_found_gets_a_message_naming_them():
    model, tokenizer = tiny_architecture("bert")
    with pytest.raises(ArchitectureError, match="no stack of blocks: _NoStack has no nn.ModuleList"):
        read_architecture(_NoStack(model))
    odd = TextClassifier(BertForSequenceClassification(model.config).eval(), tokenizer, name="odd", device="cpu")
    odd.model = _NoStack(model)
    odd.architecture = None
    with pytest.raises(ModelError, match="cannot be randomized: its parts could not be found \\(no stack of blocks"):
        randomize.stages(odd)
    with pytest.raises(ArchitectureError, match="no input embedding"):
        read_architecture(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_every_word_is_read_with_its_own_tokens(name, tmp_path_factory):
    """Each word's tokens decode back to that word, on every tokenizer family: byte-level BPE tokenizers whose
    offsets keep the space ("Ġmovie" starting at the space after "the", the tiny Qwen2's) used to give a word's
    first token to the word before it and drop the last word."""
    classifier = loaded(name, tmp_path_factory)
    encoding = classifier.encode(TEXT, PAIR)
    expected = TEXT.split() + PAIR.split()
    assert list(encoding.words) == expected
    for index, word in enumerate(expected):
        ids = [t for t, w in zip(encoding.input_ids, encoding.token_word) if w == index]
        decoded = classifier.tokenizer.decode(ids).strip().lower()
        unk = classifier.tokenizer.unk_token
        assert decoded == word or (unk is not None and unk.lower() in decoded), (name, word, decoded)
