"""A causal LM prompted as a classifier ("classification via completion", paper 004 section 3.3).

A small JSON file names the LM, a prompt template with the input slot and one label word per class:

    {"kind": "prompted-lm", "model": "/path/to/a/causal/lm", "template": "Review: {text}\\nSentiment:",
     "labels": {"negative": " bad", "positive": " good"}}

The class probabilities are the softmax over the label words' next-token logits at the last token of the prompt
(``LabelWordHead``), so every method and metric sees an ordinary classifier. Only the input's words are explained:
the template's tokens are marked like special tokens (never removed, never attributed, shown greyed); a sentence
pair fills ``{pair}``. ``"chat": true`` wraps the filled template in the tokenizer's chat template as one user turn.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.modeling_outputs import SequenceClassifierOutput

import settings
from corpora.records import word_spans
from models.causal_bert import at_last_kept
from models.classifier import TextClassifier, TokenBatch
from models.encoding import Encoding, check_text
from models.errors import InputError, ModelError

KIND = "prompted-lm"
SLOT, PAIR_SLOT = "{text}", "{pair}"


class LabelWordHead(torch.nn.Module):
    """A causal LM seen as a sequence classifier: logits = the label words' next-token logits at the last kept
    position (found from the attention mask, whatever the padding side)."""

    def __init__(self, lm, label_token_ids: list[int], label_names: list[str]):
        super().__init__()
        self.lm = lm
        self.register_buffer("label_ids", torch.tensor(label_token_ids, dtype=torch.long), persistent=False)
        self.config = lm.config
        self.config.id2label = dict(enumerate(label_names))
        self.config.label2id = {name: i for i, name in enumerate(label_names)}

    def get_input_embeddings(self):
        return self.lm.get_input_embeddings()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, output_attentions=None, **kwargs):
        outputs = self.lm(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                          output_attentions=output_attentions, use_cache=False)
        next_token = at_last_kept(outputs.logits, attention_mask)
        return SequenceClassifierOutput(logits=next_token[:, self.label_ids], attentions=outputs.attentions)


def _template_parts(template: str, pair: bool) -> list[str]:
    """The template split around its slots: [before, after] or [before, between, after]."""
    if SLOT not in template:
        raise ModelError(f"The prompt template has no {SLOT} slot for the input: {template!r}. Put {SLOT} where "
                         f"the text goes, e.g. \"Review: {SLOT}\\nSentiment:\".")
    if pair and PAIR_SLOT not in template:
        raise ModelError(f"This input is a sentence pair but the template has no {PAIR_SLOT} slot.")
    before, after = template.split(SLOT, 1)
    if PAIR_SLOT in after:
        between, after = after.split(PAIR_SLOT, 1)
        return [before, between, after]
    return [before, after]


class PromptedClassifier(TextClassifier):
    """``TextClassifier`` whose encodings are the filled prompt, with only the input's words as words."""

    def __init__(self, model: LabelWordHead, tokenizer, *, spec: dict, **kwargs):
        super().__init__(model, tokenizer, **kwargs)
        self.spec = spec
        self.warnings = (*self.warnings, "A prompted causal LM: attention is causal, so a word can only influence "
                         "the words after it, and the label is read at the last prompt token (paper 003's caveat on "
                         "decoders).")

    def with_model(self, model, fingerprint: str, name: str | None = None) -> PromptedClassifier:
        return PromptedClassifier(model, self.tokenizer, spec=self.spec, name=name or self.name,
                                  fingerprint=fingerprint, device=self.device, source=self.source,
                                  manifest=self.manifest, max_batch_tokens=self.max_batch_tokens,
                                  throughput=self.throughput)

    def tokenize_texts(self, texts: list[str], pairs: list[str] | None = None) -> TokenBatch:
        """Token ids of many filled prompts (the delete and MLM-fill operators rebuild inputs as text)."""
        segments: list[str | None] = list(pairs) if pairs else [None] * len(texts)
        prompts = [self._prompt(text, pair)[0] for text, pair in zip(texts, segments)]
        enc = self.tokenizer(prompts, add_special_tokens=not self.spec.get("chat"), truncation=True,
                             max_length=self.max_length)
        return TokenBatch(input_ids=enc["input_ids"], token_type_ids=None)

    def _prompt(self, text: str, pair: str | None) -> tuple[str, list[tuple[int, int, int]]]:
        """The filled prompt and, per input segment, (segment, start, end) of its characters in it."""
        parts = _template_parts(self.spec["template"], pair is not None)
        filled, ranges = parts[0], []
        for segment, (value, following) in enumerate(zip([text] + ([pair] if pair is not None else []), parts[1:])):
            ranges.append((segment, len(filled), len(filled) + len(value)))
            filled += value + following
        if self.spec.get("chat"):
            if not getattr(self.tokenizer, "chat_template", None):
                raise ModelError(f"'{self.name}' asks for a chat template but its tokenizer has none; set "
                                 f"\"chat\": false.")
            wrapped = self.tokenizer.apply_chat_template([{"role": "user", "content": filled}], tokenize=False,
                                                         add_generation_prompt=True)
            shift = wrapped.index(filled)
            filled, ranges = wrapped, [(s, a + shift, b + shift) for s, a, b in ranges]
        return filled, ranges

    def encode(self, text: str, pair: str | None = None) -> Encoding:
        text, pair, removed = check_text(text, pair)
        return replace(self._encode_fitting([text] + ([pair] if pair is not None else [])), removed_invisible=removed)

    def _encode_fitting(self, values: list[str]) -> Encoding:
        encoding = self._encode_words(values, None)
        if encoding.n_tokens <= self.max_length:
            return encoding
        # too long: keep the prompt whole and as many of the input's first words as fit
        prompt_tokens = sum(1 for w in encoding.token_word if w < 0)
        per_word = np.bincount([w for w in encoding.token_word if w >= 0], minlength=encoding.n_words)
        kept = int(np.searchsorted(np.cumsum(per_word), self.max_length - prompt_tokens, side="right"))
        if kept < 1:
            raise InputError(f"The prompt of '{self.name}' alone is {prompt_tokens} tokens, at or over the model's "
                             f"limit of {self.max_length}; shorten the template.")
        shorter = self._encode_words(values, kept)
        while shorter.n_tokens > self.max_length and kept > 1:  # merges at the cut can add a token
            kept -= 1
            shorter = self._encode_words(values, kept)
        return replace(shorter, n_words_total=encoding.n_words,
                       truncated_tokens=encoding.n_tokens - shorter.n_tokens)

    def _encode_words(self, values: list[str], kept_words: int | None) -> Encoding:
        spans = [word_spans(v) for v in values]
        if kept_words is not None:  # too long for the model: cut the input's last words, keep the prompt whole
            flat = [(s, span) for s, seg in enumerate(spans) for span in seg][:kept_words]
            spans = [[span for s, span in flat if s == segment] for segment in range(len(values))]
            values = [v[:seg[-1][1]] if seg else "" for v, seg in zip(values, spans)]
        prompt, ranges = self._prompt(values[0], values[1] if len(values) > 1 else None)
        enc = self.tokenizer(prompt, add_special_tokens=not self.spec.get("chat"), return_offsets_mapping=True)
        starts = []  # (absolute char start, word index, segment, value span)
        index = 0
        for (segment, begin, _end), seg_spans in zip(ranges, spans):
            for s, e in seg_spans:
                starts.append((begin + s, begin + e, index, segment, values[segment][s:e], (s, e)))
                index += 1
        token_word = []
        for start, end in enc["offset_mapping"]:
            while start < end and prompt[start].isspace():  # byte-level BPE tokens carry their leading space
                start += 1
            word = next((w for a, b, w, *_ in starts if a <= start < b), -1) if end > start else -1
            token_word.append(word)
        return Encoding(text=values[0], pair=values[1] if len(values) > 1 else None,
                        input_ids=tuple(enc["input_ids"]), token_type_ids=None,
                        tokens=tuple(self.tokenizer.convert_ids_to_tokens(enc["input_ids"])),
                        token_word=tuple(token_word), words=tuple(w[4] for w in starts),
                        word_segment=tuple(w[3] for w in starts), word_spans=tuple(w[5] for w in starts),
                        n_words_total=len(starts), truncated_tokens=0)


def read_spec(path: Path) -> dict:
    try:
        spec = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ModelError(f"Cannot read the prompted-model file '{path}': {error}") from error
    if not isinstance(spec, dict) or spec.get("kind") != KIND:
        raise ModelError(f"'{path}' is not a prompted-model file (it needs \"kind\": \"{KIND}\", \"model\", "
                         f"\"template\" and \"labels\").")
    missing = [k for k in ("model", "template", "labels") if k not in spec]
    if missing:
        raise ModelError(f"The prompted-model file '{path}' lacks {', '.join(missing)}.")
    if not isinstance(spec["labels"], dict) or len(spec["labels"]) < 2:
        raise ModelError(f"'labels' in '{path}' must map each class name to its label word (two classes at least).")
    _template_parts(spec["template"], pair=False)
    return spec


def label_token_ids(tokenizer, labels: dict[str, str]) -> list[int]:
    """One token per label word (a word that tokenizes into several tokens is refused, with the tokens shown)."""
    ids = []
    for name, word in labels.items():
        tokens = tokenizer(word, add_special_tokens=False)["input_ids"]
        if len(tokens) != 1:
            pieces = tokenizer.convert_ids_to_tokens(tokens)
            raise ModelError(f"The label word {word!r} of class '{name}' is {len(tokens)} tokens ({pieces}); choose "
                             f"a word that is one token (often with a leading space, e.g. \" good\").")
        ids.append(tokens[0])
    if len(set(ids)) != len(ids):
        raise ModelError("Two classes have the same label token; give each class its own word.")
    return ids


def load_prompted(path: Path, device=None) -> PromptedClassifier:
    spec = read_spec(path)
    location = spec["model"]
    folder = (path.parent / location) if not Path(location).is_absolute() else Path(location)
    source = str(folder) if folder.exists() else location
    try:
        local_only = not settings.allow_hub()  # offline by default without relying on HF_HUB_OFFLINE (a notebook's)
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        lm = AutoModelForCausalLM.from_pretrained(source, attn_implementation="eager", use_safetensors=True,
                                                  local_files_only=local_only)
    except (OSError, ValueError) as error:
        raise ModelError(f"Cannot load the causal LM '{location}' of '{path}': {str(error).splitlines()[0]}") from error
    names = list(spec["labels"])
    head = LabelWordHead(lm, label_token_ids(tokenizer, spec["labels"]), names)
    return PromptedClassifier(head, tokenizer, spec=spec, name=path.stem, device=device, source=str(path),
                              manifest={"label_names": names, "prompt": spec})
