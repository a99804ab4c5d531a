"""The graph's vocabulary: entity and relation types, the words that are never entities, and the
technical terms and name patterns the spaCy pipeline is taught. Data only; the models, the pipeline
(graph.nlp) and the extractor (graph.entities) are all built from it."""

from __future__ import annotations

# The documented entity types. spaCy's labels map onto them; numbers, dates and amounts are not
# entities of the graph.
PERSON, ORGANIZATION, LOCATION, CONCEPT = "person", "organization", "location", "concept"
TECHNOLOGY, PRODUCT, EVENT, WORK, GROUP = "technology", "product", "event", "work", "group"
ENTITY_TYPE_LABELS = {
    PERSON: "Person", ORGANIZATION: "Organization", LOCATION: "Location", CONCEPT: "Concept",
    TECHNOLOGY: "Technology", PRODUCT: "Product", EVENT: "Event", WORK: "Work (titles, laws)",
    GROUP: "Group (nationalities, religious or political groups)",
}
ENTITY_TYPES = tuple(ENTITY_TYPE_LABELS)
LABEL_TYPES = {
    "PERSON": PERSON, "ORG": ORGANIZATION, "GPE": LOCATION, "LOC": LOCATION, "FAC": LOCATION,
    "PRODUCT": PRODUCT, "EVENT": EVENT, "WORK_OF_ART": WORK, "LAW": WORK, "LANGUAGE": CONCEPT,
    "NORP": GROUP, "TECHNOLOGY": TECHNOLOGY,
}
# When one name is typed differently in different sentences, the most specific kind wins ties.
TYPE_PRIORITY = {PERSON: 9, ORGANIZATION: 8, LOCATION: 8, TECHNOLOGY: 7, PRODUCT: 6, EVENT: 5, WORK: 4,
                 GROUP: 3, CONCEPT: 1}

WORKS_WITH, PART_OF, LOCATED_IN, USES = "works_with", "part_of", "located_in", "uses"
CREATED, MEMBER_OF, LEADS, RELATED_TO = "created", "member_of", "leads", "related_to"
RELATION_LABELS = {
    WORKS_WITH: "works with", PART_OF: "part of", LOCATED_IN: "located in", USES: "uses", CREATED: "created",
    MEMBER_OF: "member of", LEADS: "leads", RELATED_TO: "related to",
}
SYMMETRIC_RELATIONS = {WORKS_WITH, RELATED_TO}

GENERIC_NOUNS = frozenset("""
thing things stuff time times way ways lot lots kind kinds sort sorts type types part parts number numbers
people person persons one ones something anything everything nothing someone anyone everyone year years day
days week weeks month months today tomorrow yesterday moment point points case cases fact facts place places
example examples end beginning result results use uses problem problems issue issues idea ideas question
questions bit bits area areas side sides level levels form forms group groups set sets line lines item items
order rest use value values amount amounts aspect aspects matter matters reason reasons situation effect
effects other others self itself role roles term terms course manner means instance instances total
""".split())
_GENERIC_MODIFIERS = frozenset("""
new old good bad big small large little high low great many much more most less least few several various
different same other such own certain particular specific important significant major minor main key first
second third last next previous recent current further additional potential possible overall general whole
entire real true full best better worse worst early late long short similar available common present total
""".split())
# Technical terms the statistical model does not know as such: languages, frameworks, data stores,
# protocols and well-known algorithms. Matched case-insensitively, as whole words.
TECH_TERMS = """
python javascript typescript java kotlin scala rust golang c++ c# ruby php perl haskell elixir erlang swift
sql nosql graphql grpc rest http https json yaml xml html css webassembly wasm
django flask fastapi rails laravel spring react vue angular svelte node.js nodejs deno express next.js
numpy pandas scipy pytorch tensorflow keras jax scikit-learn sklearn spacy nltk hugging face transformers
postgresql postgres mysql sqlite mongodb redis elasticsearch cassandra kafka rabbitmq celery pgvector
docker kubernetes terraform ansible nginx linux git github gitlab aws azure gcp
oauth jwt websocket websockets tcp udp dns ssh tls
bert gpt word2vec pagerank quicksort mergesort k-means kmeans backpropagation
""".split()
TECH_PHRASES = """
machine learning|deep learning|neural network|neural networks|natural language processing|computer vision
gradient descent|stochastic gradient descent|binary search|random forest|logistic regression|linear regression
support vector machine|decision tree|reinforcement learning|dijkstra's algorithm|a* search|hash table
large language model|large language models|vector database|knowledge graph|rest api|hnsw|bm25|tf-idf
""".replace("\n", "|").split("|")
_TECH_HEADS = ["api", "apis", "sdk", "framework", "library", "protocol", "algorithm", "database", "engine"]
_ORG_HEADS = ["team", "teams", "group", "department", "division", "committee", "council", "lab", "labs",
              "laboratory", "institute", "university", "foundation", "association", "agency", "ministry",
              "corp", "corp.", "corporation", "inc", "inc.", "ltd", "ltd.", "llc", "gmbh", "plc", "company",
              "society", "board", "office", "bureau", "squad", "guild"]


def ruler_patterns() -> list[dict]:
    """EntityRuler patterns: technical terms, '<Name> API'-style technology names, '<Name> Team'-style
    organisations. Rules only add what the statistical model misses; it still sees the rest."""
    patterns: list[dict] = []
    # Plain strings go to the PhraseMatcher (matched on LOWER), which is far cheaper than token patterns.
    for term in [*TECH_TERMS, *TECH_PHRASES]:
        term = term.strip()
        if term:
            patterns.append({"label": "TECHNOLOGY", "pattern": term})
    proper = {"POS": "PROPN"}
    upper = {"IS_UPPER": True, "IS_ALPHA": True}
    for lead in (proper, upper):
        patterns.append({"label": "TECHNOLOGY",
                         "pattern": [dict(lead, OP="+"), {"LOWER": {"IN": _TECH_HEADS}}]})
        patterns.append({"label": "ORG", "pattern": [dict(lead, OP="+"), {"LOWER": {"IN": _ORG_HEADS}},
                                                     {"ORTH": ".", "OP": "?"}]})
    return patterns
