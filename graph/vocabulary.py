"""The graph's vocabulary: entity and relation types, the words that are never entities, and the
technical terms and name patterns the spaCy pipeline is taught. Data only; the models, the pipeline
(graph.extraction.pipeline) and the extractor (graph.extraction) are all built from it."""

from __future__ import annotations

# The version of the extraction rules (this vocabulary, the graph.extraction package and its data).
# Raise it when a change makes the same text give other entities or types: the sleep cycle's Link
# step then reads every memory extracted by an older version again, so old entities are re-typed.
EXTRACTION_RULES_VERSION = 9  # 9: French names by French's recogniser; address lines' towns (2026-12-08)

# The documented entity types. spaCy's labels map onto them; numbers, dates and amounts are not
# entities of the graph.
PERSON, ORGANIZATION, LOCATION, CONCEPT = "person", "organization", "location", "concept"
TECHNOLOGY, PRODUCT, EVENT, WORK, GROUP = "technology", "product", "event", "work", "group"
ENTITY_TYPE_LABELS = {
    PERSON: "Person",
    ORGANIZATION: "Organization",
    LOCATION: "Location",
    CONCEPT: "Concept",
    TECHNOLOGY: "Technology",
    PRODUCT: "Product",
    EVENT: "Event",
    WORK: "Work (titles, laws)",
    GROUP: "Group (nationalities, religious or political groups)",
}
ENTITY_TYPES = tuple(ENTITY_TYPE_LABELS)
LABEL_TYPES = {
    "PERSON": PERSON,
    "ORG": ORGANIZATION,
    "GPE": LOCATION,
    "LOC": LOCATION,
    "FAC": LOCATION,
    "PRODUCT": PRODUCT,
    "EVENT": EVENT,
    "WORK_OF_ART": WORK,
    "LAW": WORK,
    "LANGUAGE": CONCEPT,
    "NORP": GROUP,
    "TECHNOLOGY": TECHNOLOGY,
}
# When one name is typed differently in different sentences, the most specific kind wins ties.
TYPE_PRIORITY = {
    PERSON: 9,
    ORGANIZATION: 8,
    LOCATION: 8,
    TECHNOLOGY: 7,
    PRODUCT: 6,
    EVENT: 5,
    WORK: 4,
    GROUP: 3,
    CONCEPT: 1,
}

WORKS_WITH, PART_OF, LOCATED_IN, USES = "works_with", "part_of", "located_in", "uses"
CREATED, MEMBER_OF, LEADS, RELATED_TO = "created", "member_of", "leads", "related_to"
RELATION_LABELS = {
    WORKS_WITH: "works with",
    PART_OF: "part of",
    LOCATED_IN: "located in",
    USES: "uses",
    CREATED: "created",
    MEMBER_OF: "member of",
    LEADS: "leads",
    RELATED_TO: "related to",
}
SYMMETRIC_RELATIONS = {WORKS_WITH, RELATED_TO}

GENERIC_NOUNS = frozenset(
    """
thing things stuff time times way ways lot lots kind kinds sort sorts type types part parts number numbers
people person persons one ones something anything everything nothing someone anyone everyone year years day
days week weeks month months today tomorrow yesterday moment point points case cases fact facts place places
example examples end beginning result results use uses problem problems issue issues idea ideas question
questions bit bits area areas side sides level levels form forms group groups set sets line lines item items
order rest use value values amount amounts aspect aspects matter matters reason reasons situation effect
effects other others self itself role roles term terms course manner means instance instances total
""".split()
)
_GENERIC_MODIFIERS = frozenset(
    """
new old good bad big small large little high low great many much more most less least few several various
different same other such own certain particular specific important significant major minor main key first
second third last next previous recent current further additional potential possible overall general whole
entire real true full best better worse worst early late long short similar available common present total
""".split()
)
# Technical terms the statistical model does not know as such: languages, frameworks, data stores,
# protocols, well-known algorithms, and the everyday software people name in notes (chat, office and
# design apps, hobby computers). Matched case-insensitively, as whole words.
TECH_TERMS = """
python javascript typescript java kotlin scala rust golang c++ c# ruby php perl haskell elixir erlang swift
sql nosql graphql grpc rest http https json yaml xml html css webassembly wasm
django flask fastapi rails laravel spring react vue angular svelte node.js nodejs deno express next.js
numpy pandas scipy pytorch tensorflow keras jax scikit-learn sklearn spacy nltk transformers
postgresql postgres mysql sqlite mongodb redis elasticsearch cassandra kafka rabbitmq celery pgvector
docker kubernetes terraform ansible nginx linux git github gitlab aws azure gcp
oauth jwt websocket websockets tcp udp dns ssh tls
bert gpt word2vec pagerank quicksort mergesort k-means kmeans backpropagation
go c++ objective-c bash zsh powershell lua julia matlab fortran cobol clojure ocaml f# dart zig nim
mariadb oracle sql-server mssql dynamodb couchdb couchbase neo4j clickhouse snowflake bigquery redshift
timescaledb cockroachdb supabase firebase memcached etcd consul vault minio s3 ec2 lambda cloudfront
duckdb influxdb prometheus grafana kibana logstash opensearch solr lucene faiss qdrant weaviate pinecone
milvus chroma chromadb hnsw ivfflat pgbouncer pg_dump psql tsvector autovacuum
nextjs next.js nuxt remix gatsby astro redux mobx zustand jquery bootstrap tailwind tailwindcss htmx
webpack vite rollup esbuild parcel babel eslint prettier jest vitest mocha cypress playwright selenium
storybook npm yarn pnpm pip poetry conda cargo maven gradle
django-ninja drf sqlalchemy alembic pydantic celery airflow dagster prefect spark hadoop flink dbt
helm kubectl kubelet kustomize istio linkerd argocd openshift rancher k3s minikube
podman containerd jenkins circleci travis buildkite bitbucket jira confluence
heroku netlify vercel cloudflare digitalocean openstack vmware virtualbox vagrant packer pulumi
kafka pulsar nats zeromq mqtt amqp openapi swagger protobuf thrift avro parquet csv
llm llms rag crdt crdts lru bm25 tf-idf transformer transformers sentence-transformers langchain llamaindex
ollama llama mistral chatgpt gpt-4 whisper
vscode vim neovim emacs intellij pycharm xcode
rustc rustup clippy crates.io tokio serde reqwest ureq actix axum rayon wasm-bindgen toml ini
whatsapp slack zoom skype discord telegram gmail outlook dropbox notion trello asana figma canva miro
evernote onenote excel powerpoint onedrive sharepoint icloud airtable zapier salesforce hubspot shopify
wordpress squarespace mailchimp arduino scratch tableau
v8 spidermonkey tracemonkey luajit pypy graalvm jvm webkit chromium firefox
""".split()
# Terms that are also everyday English words ("react", "express", "spring"): taken as technology
# only when written with a capital (React, Express) or inside a longer technical name.
AMBIGUOUS_TECH_TERMS = frozenset(
    """
go rust swift ruby spring express rails react vue angular flask spark helm argo lambda vault consul
snowflake parcel babel jest mocha yarn poetry conda cargo maven chroma prometheus airflow
packer pulumi whisper llama mistral storybook jenkins travis nats transformer transformers
slack zoom notion scratch outlook excel canva miro
""".split()
)
# Other names of the same technology (lower case) -> the key they are filed under, and the name a
# canonical key is shown with.
TECH_ALIASES = {
    "postgres": "postgresql",
    "psql": "postgresql",
    "pg": "postgresql",
    "js": "javascript",
    "ecmascript": "javascript",
    "ts": "typescript",
    "k8s": "kubernetes",
    "kube": "kubernetes",
    "golang": "go",
    "py": "python",
    "python3": "python",
    "nodejs": "node.js",
    "node": "node.js",
    "reactjs": "react",
    "react.js": "react",
    "vuejs": "vue",
    "vue.js": "vue",
    "nextjs": "next.js",
    "mongo": "mongodb",
    "tailwindcss": "tailwind",
    "argocd": "argo cd",
    "sklearn": "scikit-learn",
    "tf": "tensorflow",
    "gcp": "google cloud",
    "google cloud platform": "google cloud",
    "amazon web services": "aws",
    "elastic": "elasticsearch",
    "es": "elasticsearch",
    "llms": "llm",
    "large language model": "llm",
    "large language models": "llm",
    "retrieval-augmented generation": "rag",
    "retrieval augmented generation": "rag",
    "chromadb": "chroma",
    "mssql": "sql-server",
    "k3s": "k3s",
    "gpt-4": "gpt-4",
    "crdts": "crdt",
}
# Aliases that are only safe as a technology when the text is a technical one: written exactly so.
CASE_SENSITIVE_ALIASES = {
    "node": "Node",
    "pg": "PG",
    "ts": "TS",
    "es": "ES",
    "tf": "TF",
    "py": "Py",
    "elastic": "Elastic",
    "kube": "Kube",
}
# Countries people write short: one place whatever the form ("US", "U.S.", "USA", "United States").
PLACE_ALIASES = {
    "us": "united states",
    "u s": "united states",
    "usa": "united states",
    "u s a": "united states",
    "united states of america": "united states",
    "uk": "united kingdom",
    "u k": "united kingdom",
}
CANONICAL_NAMES = {
    "postgresql": "PostgreSQL",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "kubernetes": "Kubernetes",
    "node.js": "Node.js",
    "mongodb": "MongoDB",
    "mysql": "MySQL",
    "graphql": "GraphQL",
    "github": "GitHub",
    "gitlab": "GitLab",
    "llm": "LLM",
    "rag": "RAG",
    "pgvector": "pgvector",
    "redis": "Redis",
    "python": "Python",
    "react": "React",
    "go": "Go",
    "argo cd": "Argo CD",
    "aws": "AWS",
    "google cloud": "Google Cloud",
    "elasticsearch": "Elasticsearch",
    "scikit-learn": "scikit-learn",
    "tensorflow": "TensorFlow",
    "vue": "Vue",
    "next.js": "Next.js",
    "tailwind": "Tailwind",
    "crdt": "CRDT",
    "sql-server": "SQL Server",
    "toml": "TOML",
}
# Currency codes and units: capitalised, often typed as organisations, never entities of the graph.
NOT_ENTITIES = frozenset(
    """
eur usd gbp jpy chf cny inr aud cad sek nok dkk pln czk huf brl mxn krw sgd hkd nzd rub try zar btc eth
kb mb gb tb kib mib gib ms km kg mph kmh rpm cpu gpu ram ssd hdd am pm a.m p.m etc e.g i.e vs ok
monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december mon tue wed thu fri sat sun jan feb mar apr jun jul aug sep
sept oct nov dec today tomorrow yesterday tonight morning evening afternoon weekend
""".split()
)
# The parts of a document and the labels of its apparatus, never entities on their own or numbered
# ("Figure 3", "Table of Contents", "Vol", "pp"); file formats and degrees after a name ("PDF", "MD").
STRUCTURE_WORDS = frozenset(
    """
figure figures fig fig. figs table tables tab page pages pg p pp abstract introduction conclusion conclusions
appendix appendices annex section sections sec chapter chapters chap part contents index glossary preface
foreword acknowledgements acknowledgments references bibliography footnote footnotes endnotes
keywords summary overview discussion methods results background supplementary equation eq eqs eqn
vol vols volume no nos issue ed eds edn edition et al ibid op cit cf ref refs doi isbn issn url http https
www pdf docx doc xlsx xls csv txt rtf odt jpg jpeg png gif tiff svg md phd msc bsc mba mphil dphil rn
frcs mrcp llb cpa header footer continued cont draft confidential total subtotal sum attn fao rsvp
phone telephone tel fax mobile email e-mail
seite seiten abbildung abb tabelle kapitel anhang inhalt inhaltsverzeichnis einleitung zusammenfassung
chapitre annexe sommaire figura tabla capítulo anexo índice página páginas pagina pagine tabella
capitolo tabel hoofdstuk bijlage inhoud samenvatting таблица рисунок глава страница приложение содержание
""".split()
)
# The words for a page of a document or a web site: a name ending in one names a page, not a thing
# ("Account Activity Page", "Rechnung Seite"), unless it is a person's ("Larry Page").
PAGE_WORDS = frozenset("page pages seite seiten página páginas pagina pagine blad страница".split())
# The abbreviations for "number" that end a field's label ("Invoice No", "Rechnung Nr", "Factura Núm").
NUMBER_WORDS = frozenset("no nr nº núm num nummer".split())
# The last word of a name that says what kind of thing it names: "Berlin Marathon" is an event,
# "Tokyo Station" and "Nishiki Market" are places, whatever the model guessed.
EVENT_HEADS = frozenset(
    """
marathon half-marathon triathlon race festival conference summit championship championships cup olympics
expo fair convention hackathon meetup workshop webinar symposium congress tournament gala ceremony
""".split()
)
PLACE_HEADS = frozenset(
    """
street st road avenue ave lane boulevard square station airport market park temple shrine church cathedral
museum bridge river lake mountain mount hill valley beach bay island harbour harbor castle palace tower
gardens garden district village town city county province
marsh marshes fen fens moor moors heath wood woods forest reserve estuary coast cove sands dunes downs vale
glen loch falls meadow meadows common trail quay wharf docks pier hall gallery galleries stadium arena
""".split()
)
# The last word of a name that says it names a business, a club or an ensemble: "Brook & Sons",
# "Riverside Rovers", "Patel's Bakery" are organisations, whatever the model guessed.
ORG_NAME_HEADS = frozenset(
    """
partners sons brothers bros associates bakery cafe café restaurant pub brewery shop store stores
fc afc united rovers wanderers rangers athletic albion harriers choir chorus orchestra ensemble band
llp lp trust union chambers club league federation association society institute foundation council
committee agency tribunal academy school college university hospital clinic surgery solicitors
coaches hire rentals logistics transport removals couriers motors garage autocentre tiles carpets
builders supplies services solutions consulting consultancy promotions productions records studios
insurance bank pharmacy opticians
""".split()
)
# The last word of a law's name ("Working Time Regulations", "Data Protection Act"); a year after it
# belongs to the name.
LAW_HEADS = frozenset("act acts regulations regulation directive convention treaty charter".split())
# Words that open a law's or a code's name before "of": "Federal Rules of Civil Procedure", "Code of Conduct".
LAW_OPENINGS = frozenset(["rules", "code"])
# Words that head the name of an idea: "Game Theory", "the Riemann Hypothesis", "Theory of Planned
# Behavior", "Principle of Least Privilege" (a concept, however a sentence used it).
IDEA_HEADS = frozenset("theory theories hypothesis theorem principle paradox conjecture dilemma fallacy".split())
# Words that introduce a person's name: "Dr. Patel", "Ms Chen".
PERSON_TITLES = frozenset(
    """dr dr. mr mr. mrs mrs. ms ms. mx prof prof. professor sir dame lady lord sister nurse judge justice
    rev rev. revd reverend cllr councillor sgt sergeant capt captain coach uncle aunt auntie""".split()
)
TECH_PHRASES = """
machine learning|deep learning|neural network|neural networks|natural language processing|computer vision
gradient descent|stochastic gradient descent|binary search|random forest|logistic regression|linear regression
support vector machine|decision tree|reinforcement learning|dijkstra's algorithm|a* search|hash table
large language model|large language models|vector database|knowledge graph|rest api|hnsw|bm25|tf-idf
argo cd|github actions|google cloud|amazon web services|sql server|react query|testing library|cross-encoder
retrieval-augmented generation|retrieval augmented generation|dynamic programming|lru cache|hash map
hugging face|stable diffusion|gitlab ci|raspberry pi|google docs|google sheets|google drive|google meet
microsoft teams|microsoft excel|microsoft word|visual studio code|power bi
""".replace("\n", "|").split("|")
_TECH_HEADS = ["api", "apis", "sdk", "framework", "library", "protocol", "algorithm", "database", "engine"]
_ORG_HEADS = [
    "team",
    "teams",
    "group",
    "department",
    "division",
    "committee",
    "council",
    "lab",
    "labs",
    "laboratory",
    "institute",
    "university",
    "foundation",
    "association",
    "agency",
    "ministry",
    "corp",
    "corp.",
    "corporation",
    "inc",
    "inc.",
    "ltd",
    "ltd.",
    "llc",
    "gmbh",
    "plc",
    "company",
    "society",
    "board",
    "office",
    "bureau",
    "squad",
    "guild",
]


def ruler_patterns() -> list[dict]:
    """EntityRuler patterns: technical terms, '<Name> API'-style technology names, '<Name> Team'-style
    organisations. Rules only add what the statistical model misses; it still sees the rest."""
    patterns: list[dict] = []
    # Plain strings go to the PhraseMatcher (matched on LOWER), which is far cheaper than token patterns.
    for term in dict.fromkeys([*TECH_TERMS, *TECH_PHRASES]):
        term = term.strip()
        if term:
            patterns.append({"label": "TECHNOLOGY", "pattern": term})
    proper = {"POS": "PROPN"}
    upper = {"IS_UPPER": True, "IS_ALPHA": True}
    for lead in (proper, upper):
        patterns.append({"label": "TECHNOLOGY", "pattern": [dict(lead, OP="+"), {"LOWER": {"IN": _TECH_HEADS}}]})
        patterns.append(
            {"label": "ORG", "pattern": [dict(lead, OP="+"), {"LOWER": {"IN": _ORG_HEADS}}, {"ORTH": ".", "OP": "?"}]}
        )
    return patterns
