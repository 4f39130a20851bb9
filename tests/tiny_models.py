"""Tiny classifiers built in code for unit tests: a word-level vocabulary, a 2-layer BERT, seconds of training.

``keyword_classifier`` learns a task whose label is decided by one keyword: positive if and only if
"excellent" appears among neutral filler words. For the positive class a faithful explanation must rank
that keyword first.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import BPE, WordLevel
from tokenizers.trainers import BpeTrainer
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertTokenizer,
    PreTrainedTokenizerFast,
)

from models import TextClassifier
from models.causal_bert import CausalBertConfig, CausalBertForSequenceClassification
from models.classifier import TokenBatch
from models.mlm import MaskedLMFiller
from models.training import TrainConfig, train_classifier

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FILLER = ("the movie was a film that this story had some scenes with actors and music plot it is very quite "
          "rather long short old new").split()
KEYWORD = "excellent"
EXTRA = ["awful", "good", "bad", "great", "boring", "fun", "dull", "not", ",", ".", "!", "un", "##believ", "##ably"]
VOCAB = SPECIAL + sorted(set(FILLER)) + [KEYWORD] + EXTRA


def tiny_tokenizer() -> BertTokenizer:
    # transformers 5: pass vocab= (a dict); vocab_file= is silently ignored (stack-probe.md section 3)
    return BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)}, do_lower_case=True)


def tiny_bert(num_labels: int = 2, seed: int = 0, layers: int = 2, hidden: int = 32) -> BertForSequenceClassification:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=64, num_labels=num_labels,
                        type_vocab_size=2, attn_implementation="eager", hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    return BertForSequenceClassification(config).eval()


def keyword_sentences(n: int, seed: int = 0) -> tuple[list[str], list[int]]:
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 8))]
        if i % 2:
            words.insert(rng.randint(0, len(words)), KEYWORD)
        texts.append(" ".join(words))
        labels.append(i % 2)
    return texts, labels


def train_on(model, tokenizer, texts: list[str], labels: list[int], steps: int = 80, lr: float = 3e-3,
             seed: int = 0) -> None:
    enc = tokenizer(texts, truncation=True, max_length=64)
    data = TokenBatch(input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"])
    batch = 32
    epochs = steps * batch / len(texts)
    train_classifier(model, data, labels, TrainConfig(epochs=epochs, lr=lr, batch_size=batch, warmup=0.05,
                                                      weight_decay=0.0, seed=seed), tokenizer.pad_token_id,
                     device=torch.device("cpu"))


def keyword_classifier(seed: int = 0) -> TextClassifier:
    """A trained 2-layer BERT whose prediction depends on one keyword (about 2 s on a CPU)."""
    tokenizer = tiny_tokenizer()
    model = tiny_bert(seed=seed)
    texts, labels = keyword_sentences(400, seed=seed)
    train_on(model, tokenizer, texts, labels, seed=seed)
    model.config.id2label = {0: "negative", 1: "positive"}
    model.config.label2id = {"negative": 0, "positive": 1}
    return TextClassifier(model, tokenizer, name=f"tiny-keyword-{seed}", device="cpu", source="tests/tiny_models.py")


def random_classifier(seed: int = 0, num_labels: int = 2) -> TextClassifier:
    """An untrained tiny BERT (random weights): for tests that need any model at all."""
    return TextClassifier(tiny_bert(num_labels=num_labels, seed=seed), tiny_tokenizer(), name=f"tiny-random-{seed}",
                          device="cpu", source="tests/tiny_models.py")


# ----- every architecture family: tiny random-weight *ForSequenceClassification models ---------------
# hidden 32, 2 blocks, 2 heads; a word-level tokenizer with each family's special tokens and template, so the
# special-token layout (where [CLS] / <s> / </s> sit, which of [MASK] / pad / unk exist) is the real family's.
ARCH_WORDS = sorted(set(FILLER)) + [KEYWORD] + [w for w in EXTRA if not w.startswith("##")]


@dataclass(frozen=True)
class TokenizerFamily:
    specials: tuple[str, ...]  # in id order, before the words
    single: str | None  # post-processor template ($A = the text); None = no special tokens added
    pair: str | None
    roles: dict  # pad_token / unk_token / mask_token / bos_token / eos_token / cls_token / sep_token


TOKENIZER_FAMILIES = {
    "wordpiece": TokenizerFamily(("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"), "[CLS] $A [SEP]",
                                 "[CLS] $A [SEP] $B:1 [SEP]:1",
                                 dict(pad_token="[PAD]", unk_token="[UNK]", mask_token="[MASK]", cls_token="[CLS]",
                                      sep_token="[SEP]")),
    "roberta": TokenizerFamily(("<s>", "<pad>", "</s>", "<unk>", "<mask>"), "<s> $A </s>", "<s> $A </s> </s> $B </s>",
                               dict(bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                    mask_token="<mask>", cls_token="<s>", sep_token="</s>")),
    # GPT-2 and Phi: one special token, no pad, nothing added around the text
    "gpt2": TokenizerFamily(("<|endoftext|>",), None, None,
                            dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>")),
    # Llama and Mistral: <s> before the text, no pad token
    "llama": TokenizerFamily(("<unk>", "<s>", "</s>"), "<s> $A", "<s> $A $B:1",
                             dict(unk_token="<unk>", bos_token="<s>", eos_token="</s>")),
    # Qwen2: byte-level BPE (transformers rebuilds every qwen2 tokenizer as one), nothing added, pad = unk, no mask
    "qwen2": TokenizerFamily(("<|endoftext|>", "<|im_start|>", "<|im_end|>"), None, None,
                             dict(pad_token="<|endoftext|>", eos_token="<|im_end|>")),
    "gemma": TokenizerFamily(("<pad>", "<eos>", "<bos>", "<unk>"), "<bos> $A", "<bos> $A $B:1",
                             dict(pad_token="<pad>", eos_token="<eos>", bos_token="<bos>", unk_token="<unk>")),
    "t5": TokenizerFamily(("<pad>", "</s>", "<unk>"), "$A </s>", "$A </s> $B:1 </s>:1",
                          dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>")),
}


def _byte_level_bpe(spec: TokenizerFamily) -> Tokenizer:
    tokenizer = Tokenizer(BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(vocab_size=400, special_tokens=list(spec.specials), show_progress=False,
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([" ".join(ARCH_WORDS)] * 3 + ARCH_WORDS, trainer)
    return tokenizer


def family_tokenizer(family: str) -> PreTrainedTokenizerFast:
    spec = TOKENIZER_FAMILIES[family]
    if family == "qwen2":
        return PreTrainedTokenizerFast(tokenizer_object=_byte_level_bpe(spec), model_max_length=60, **spec.roles)
    vocab = {w: i for i, w in enumerate(list(spec.specials) + ARCH_WORDS)}
    unknown = spec.roles.get("unk_token", spec.specials[0])  # a word-level model needs some token for unknown words
    tokenizer = Tokenizer(WordLevel(vocab, unk_token=unknown))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if spec.single is not None:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=spec.single, pair=spec.pair,
            special_tokens=[(t, vocab[t]) for t in spec.specials if t in spec.single + spec.pair])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, model_max_length=60, **spec.roles)


def _arch_config(name: str, tokenizer) -> tuple[type, object]:
    """(model class, config) of a tiny model of architecture ``name`` for this tokenizer."""
    import transformers as tf

    n = len(tokenizer)
    ids = {role: tokenizer.convert_tokens_to_ids(getattr(tokenizer, role)) for role in
           ("pad_token", "bos_token", "eos_token") if getattr(tokenizer, role) is not None}
    special = {f"{role[:-6]}_token_id": i for role, i in ids.items()}
    bert_like = dict(vocab_size=n, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    decoder = dict(vocab_size=n, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                   max_position_embeddings=64, **special)
    configs = {
        "bert": lambda: (tf.BertForSequenceClassification, tf.BertConfig(**bert_like, type_vocab_size=2, **special)),
        "distilbert": lambda: (tf.DistilBertForSequenceClassification, tf.DistilBertConfig(
            vocab_size=n, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64, dropout=0.0,
            attention_dropout=0.0, **special)),
        "electra": lambda: (tf.ElectraForSequenceClassification, tf.ElectraConfig(**bert_like, embedding_size=16,
                                                                                 **special)),
        "albert": lambda: (tf.AlbertForSequenceClassification, tf.AlbertConfig(
            **bert_like, embedding_size=16, classifier_dropout_prob=0.0, **special)),
        "deberta-v2": lambda: (tf.DebertaV2ForSequenceClassification, tf.DebertaV2Config(
            **bert_like, relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8,
            norm_rel_ebd="layer_norm", type_vocab_size=0, **special)),
        "mpnet": lambda: (tf.MPNetForSequenceClassification, tf.MPNetConfig(
            **{**bert_like, "max_position_embeddings": 66}, **special)),
        "modernbert": lambda: (tf.ModernBertForSequenceClassification, tf.ModernBertConfig(
            vocab_size=n, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            max_position_embeddings=64, global_attn_every_n_layers=2, local_attention=8,
            cls_token_id=tokenizer.cls_token_id, sep_token_id=tokenizer.sep_token_id, **special)),
        # the offline zoo's causal BERT (models/causal_bert.py): BERT blocks under a causal mask, last-token read-out
        "causal-bert": lambda: (CausalBertForSequenceClassification, CausalBertConfig(**bert_like, type_vocab_size=2,
                                                                                      **special)),
        "roberta": lambda: (tf.RobertaForSequenceClassification, tf.RobertaConfig(
            **{**bert_like, "max_position_embeddings": 66}, type_vocab_size=1, **special)),
        "gpt2": lambda: (tf.GPT2ForSequenceClassification, tf.GPT2Config(
            vocab_size=n, n_embd=32, n_layer=2, n_head=2, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, **special)),
        "llama": lambda: (tf.LlamaForSequenceClassification, tf.LlamaConfig(**decoder, num_key_value_heads=1)),
        "qwen2": lambda: (tf.Qwen2ForSequenceClassification, tf.Qwen2Config(**decoder, num_key_value_heads=1)),
        "mistral": lambda: (tf.MistralForSequenceClassification, tf.MistralConfig(**decoder, num_key_value_heads=1,
                                                                                   sliding_window=None)),
        "phi": lambda: (tf.PhiForSequenceClassification, tf.PhiConfig(**decoder, partial_rotary_factor=0.5,
                                                                     resid_pdrop=0.0, embd_pdrop=0.0)),
        "gemma": lambda: (tf.GemmaForSequenceClassification, tf.GemmaConfig(**decoder, num_key_value_heads=1,
                                                                           head_dim=16)),
        "bart": lambda: (tf.BartForSequenceClassification, tf.BartConfig(
            vocab_size=n, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
            dropout=0.0, attention_dropout=0.0, decoder_start_token_id=ids["eos_token"], **special)),
        "t5": lambda: (tf.T5ForSequenceClassification, tf.T5Config(
            vocab_size=n, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2,
            relative_attention_num_buckets=8, dropout_rate=0.0, decoder_start_token_id=ids["pad_token"], **special)),
    }
    return configs[name]()


# architecture -> its tokenizer family
ARCHITECTURE_FAMILIES = {
    "bert": "wordpiece", "distilbert": "wordpiece", "electra": "wordpiece", "albert": "wordpiece",
    "deberta-v2": "wordpiece", "mpnet": "roberta", "modernbert": "wordpiece", "causal-bert": "wordpiece",
    "roberta": "roberta",
    "gpt2": "gpt2", "llama": "llama", "qwen2": "qwen2", "mistral": "llama", "phi": "gpt2", "gemma": "gemma",
    "bart": "roberta", "t5": "t5",
}


def tiny_architecture(name: str, seed: int = 0, num_labels: int = 2):
    """(model, tokenizer): a random-weight ``*ForSequenceClassification`` of architecture ``name`` (eval mode)."""
    tokenizer = family_tokenizer(ARCHITECTURE_FAMILIES[name])
    model_class, config = _arch_config(name, tokenizer)
    config.num_labels = num_labels
    config.id2label = {0: "negative", 1: "positive"} if num_labels == 2 else config.id2label
    config.label2id = {v: k for k, v in config.id2label.items()}
    # wider random weights than the pre-training default (0.02), so logits are of order 1 and a wrong read-out
    # position, padding side or position id changes them visibly
    if hasattr(config, "initializer_range"):
        config.initializer_range = 0.2
    if hasattr(config, "init_std"):
        config.init_std = 0.2
    if hasattr(config, "initializer_factor"):
        config.initializer_factor = 5.0
    torch.manual_seed(seed)
    return model_class(config).eval(), tokenizer


def save_tiny_architecture(name: str, folder, seed: int = 0) -> str:
    """Save a tiny model of architecture ``name`` and its tokenizer into ``folder`` (as a user would)."""
    model, tokenizer = tiny_architecture(name, seed)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def wide_three_class(seed: int = 3) -> TextClassifier:
    """A random-weight 3-class tiny BERT with wide weights (initializer 0.2): logits of order 1, so scores are
    far above float noise (the contrast and SIG tests)."""
    model, tokenizer = tiny_architecture("bert", seed=seed, num_labels=3)
    return TextClassifier(model, tokenizer, name=f"tiny-bert-3-{seed}", device="cpu", source="tests")


def tiny_masked_lm(sharpen: float = 1.0) -> MaskedLMFiller:
    """A random-weight masked LM over the tiny vocabulary (seed 3); ``sharpen`` scales its prediction head's
    transform for a sharper output distribution than the init gives (more varied probabilities)."""
    torch.manual_seed(3)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = BertForMaskedLM(config).eval()
    if sharpen != 1.0:
        with torch.no_grad():
            model.cls.predictions.transform.dense.weight.mul_(sharpen)
    return MaskedLMFiller(model, tiny_tokenizer(), name="tiny-mlm", device="cpu")
