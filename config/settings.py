"""Settings, all from the environment (12-factor).

With nothing set the app runs on SQLite with Celery tasks executed in-process, so `make run`
works on a bare machine. With DATABASE_URL and CELERY_BROKER_URL set it runs on PostgreSQL and
Redis with separate workers.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", default=False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env_bool("DJANGO_PRODUCTION"):
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_PRODUCTION=1")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-0123456789abcdef"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "axes",
    "csp",
    "annotate",
    "judges",
    "testsets",
    "metrics",
    "monitor",
    "interchange",
    "ninja",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.request_charset.RequestCharsetMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last: turns a locked-out sign-in into the lockout page (config.auth.lockout_response).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Labelling is many small writes: WAL and a busy timeout keep the demo responsive.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
# The hand-written batches of annotate.sql (save-and-next, every page's session, user and
# membership reads) as prepared statements on PostgreSQL: planned once per connection instead
# of on every request (annotate/sql/batch.py `_Pipelined`). Off behind a pooler in transaction
# mode that cannot keep prepared statements (PgBouncer before 1.21). The threshold only lets
# those batches prepare (they ask); Django's ORM queries use client-side binding and never do.
FAITHAUDIT_PREPARED_STATEMENTS = env_bool("FAITHAUDIT_PREPARED_STATEMENTS", default=True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 1_000_000_000)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Django's database sessions and model backend, reading their row per request by SQL instead
# of a compiled ORM query (config/auth.py). Axes' check comes first: a locked-out username or
# address is refused before its password is even hashed.
SESSION_ENGINE = "config.auth"
AUTHENTICATION_BACKENDS = ["config.auth.SignInLockoutBackend", "config.auth.UserBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotate:project-list"
LOGOUT_REDIRECT_URL = "login"

# Who may create projects: "any" signed-in user, or "staff" only (the default in production).
FAITHAUDIT_PROJECT_CREATORS = (
    os.environ.get(
        "FAITHAUDIT_PROJECT_CREATORS", "staff" if env_bool("DJANGO_PRODUCTION") else "any"
    )
    .strip()
    .lower()
)
if FAITHAUDIT_PROJECT_CREATORS not in {"any", "staff"}:
    raise RuntimeError("FAITHAUDIT_PROJECT_CREATORS must be 'any' or 'staff'")

# Sign-in lockout (django-axes; issue 34's limits in config/auth.py, SignInLockoutHandler):
# LOGIN_FAILURE_LIMIT failed sign-ins (or old passwords on the password-change form) for one
# username from one client address, or LOGIN_USERNAME_FAILURE_LIMIT for the username from
# anywhere, lock that username out for LOGIN_COOLOFF_MINUTES, the right password included; an
# address is locked for everyone only after LOGIN_ADDRESS_FAILURE_LIMIT failures (high enough
# for an office behind one NAT address, low enough to stop guessing across many usernames).
# The login page and the admin's alike. A success forgives that username's failures.
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
LOGIN_USERNAME_FAILURE_LIMIT = int(
    os.environ.get("LOGIN_USERNAME_FAILURE_LIMIT", str(AXES_FAILURE_LIMIT))
)
LOGIN_ADDRESS_FAILURE_LIMIT = int(os.environ.get("LOGIN_ADDRESS_FAILURE_LIMIT", "100"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", ["username", "ip_address"], "ip_address"]
AXES_HANDLER = "config.auth.SignInLockoutHandler"
AXES_RESET_ON_SUCCESS = True
# Attempts made while locked out do not push the end of the lockout further away.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "config.auth.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.auth.client_ip"
# Behind a proxy every request comes from the proxy: name the header it sets (e.g.
# X-Forwarded-For) and the address it appended last is the client's.
LOGIN_CLIENT_IP_HEADER = os.environ.get("LOGIN_CLIENT_IP_HEADER", "").strip()
AXES_VERBOSE = False
AXES_SENSITIVE_PARAMETERS = ["csrfmiddlewaretoken"]

# Issue 34's smaller mends: the limits on a project's texts (annotate/limits.py; a 5 MB
# guidelines text made every labelling page 13.6 MB), and the cache the API's rate limit
# counts in (api/ratelimit.py). Every web process must count in the same cache, or each
# process grants a token the whole limit: Redis (FAITHAUDIT_RATE_LIMIT_CACHE_URL, by default
# the Celery broker's Redis) where there is one, this process's memory otherwise (the demo).
# The full report (the dashboard's Recompute) reads every claim of the project into one worker
# process: 850 MB at 1M claims (bench/RESULTS.md row 3), so about 8.5 GB at 10M. Past this many
# claims a Recompute fails at once with a message pointing to the headline at scale (rollups,
# bounded by gold), instead of a worker killed for its memory. 0: no cap.
FAITHAUDIT_REPORT_MAX_CLAIMS = int(os.environ.get("FAITHAUDIT_REPORT_MAX_CLAIMS", "4000000"))
FAITHAUDIT_MAX_DESCRIPTION_CHARS = int(os.environ.get("FAITHAUDIT_MAX_DESCRIPTION_CHARS", "5000"))
FAITHAUDIT_MAX_GUIDELINES_CHARS = int(os.environ.get("FAITHAUDIT_MAX_GUIDELINES_CHARS", "100000"))
FAITHAUDIT_RATE_LIMIT_CACHE_URL = os.environ.get("FAITHAUDIT_RATE_LIMIT_CACHE_URL", "") or (
    os.environ.get("CELERY_BROKER_URL", "")
    if os.environ.get("CELERY_BROKER_URL", "").startswith(("redis://", "rediss://"))
    else ""
)
API_RATE_LIMIT_CACHE = "ratelimit"
_LOCAL_MEMORY = "django.core.cache.backends.locmem.LocMemCache"
CACHES = {
    "default": {"BACKEND": _LOCAL_MEMORY},
    API_RATE_LIMIT_CACHE: (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": FAITHAUDIT_RATE_LIMIT_CACHE_URL,
            "KEY_PREFIX": "faithaudit",
        }
        if FAITHAUDIT_RATE_LIMIT_CACHE_URL
        else {"BACKEND": _LOCAL_MEMORY, "LOCATION": "ratelimit"}
    ),
}

# Mail, for password reset: without EMAIL_HOST (or an EMAIL_BACKEND) nothing is sent and the
# login page says to ask an administrator instead.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=EMAIL_PORT == 587)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", default=EMAIL_PORT == 465)
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "") or (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.dummy.EmailBackend"
)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "faithaudit@localhost")
PASSWORD_RESET_BY_EMAIL = bool(EMAIL_HOST or os.environ.get("EMAIL_BACKEND"))
PASSWORD_RESET_TIMEOUT = 60 * 60 * 3  # a reset link works for three hours

# Content-Security-Policy on every response (django-csp): scripts and styles only from our
# static files, no inline script or style, never framed, forms post only here.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve straight from static/ when collectstatic has not run (the demo, tests).
WHITENOISE_USE_FINDERS = True

# Uploads: refuse oversized imports before they are read into memory.
IMPORT_MAX_UPLOAD_BYTES = int(os.environ.get("IMPORT_MAX_UPLOAD_BYTES", str(200 * 1024 * 1024)))
# Size limits on what one answer may hold, enforced on import (line and field named, nothing
# imported) and on every claim write (annotate/limits.py). Real RAG piles are 3-50 passages
# of 100-2,000 words; the defaults leave room for 4x the largest of those, long answers and
# fine-grained claim splits, while keeping one answer's screen and memory bounded.
# Intervals treat the project's claims as the population and shrink by the finite-population
# factor where the audit holds 5% of them or more (issue 33); 0 treats them as infinite.
FAITHAUDIT_FINITE_POPULATION_CORRECTION = env_bool(
    "FAITHAUDIT_FINITE_POPULATION_CORRECTION", default=True
)
FAITHAUDIT_MAX_PASSAGES_PER_ANSWER = int(
    os.environ.get("FAITHAUDIT_MAX_PASSAGES_PER_ANSWER", "200")
)
# ~3,500 words: a long retrieved chunk (typical chunkers cut at 500-4,000 characters).
FAITHAUDIT_MAX_PASSAGE_CHARS = int(os.environ.get("FAITHAUDIT_MAX_PASSAGE_CHARS", "20000"))
# ~8,000 words: longer than any generated answer we audit; a whole report fits.
FAITHAUDIT_MAX_ANSWER_CHARS = int(os.environ.get("FAITHAUDIT_MAX_ANSWER_CHARS", "50000"))
FAITHAUDIT_MAX_QUESTION_CHARS = int(os.environ.get("FAITHAUDIT_MAX_QUESTION_CHARS", "5000"))
# An atomic claim is one sentence; 2,000 characters allows a long, unsplit one.
FAITHAUDIT_MAX_CLAIM_CHARS = int(os.environ.get("FAITHAUDIT_MAX_CLAIM_CHARS", "2000"))
FAITHAUDIT_MAX_CLAIMS_PER_ANSWER = int(os.environ.get("FAITHAUDIT_MAX_CLAIMS_PER_ANSWER", "500"))
# 10x the benchmark's 100k-answer file; a bigger corpus goes in several files.
FAITHAUDIT_MAX_ANSWERS_PER_FILE = int(os.environ.get("FAITHAUDIT_MAX_ANSWERS_PER_FILE", "1000000"))
# Screens show a pile (and an answer's claims) this many passages at a time, with page links.
FAITHAUDIT_PILE_PAGE_SIZE = int(os.environ.get("FAITHAUDIT_PILE_PAGE_SIZE", "20"))
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# The JSON API's requests per personal token per window (api/ratelimit.py); 0 = unlimited.
API_RATE_LIMIT = int(os.environ.get("FAITHAUDIT_API_RATE_LIMIT", "600"))
API_RATE_WINDOW = int(os.environ.get("FAITHAUDIT_API_RATE_WINDOW", "60"))
# Uploaded import files wait here for a worker: web and workers must share this directory.
# Never served over HTTP (no MEDIA_URL route): files are read by the import job only.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

# Celery: without a broker, tasks run in-process (the demo); with one, on workers.
# In-process, the broker is kombu's in-memory transport, named with a host so kombu does not
# warn "No hostname was supplied" on every start of the demo.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "") or "memory://localhost/"
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_ALWAYS_EAGER = not os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_IGNORE_RESULT = True
# Monitored streams (issue 29): the live judge re-judges the anchor sets once a day, and the
# streams are evaluated once a day (faithfulness and judge drift: alerts, webhooks, email).
CELERY_BEAT_SCHEDULE = {
    "monitor-rejudge-anchors": {"task": "monitor.tasks.rejudge_anchors", "schedule": 86400.0},
    "monitor-evaluate-streams": {"task": "monitor.tasks.evaluate_streams", "schedule": 86400.0},
}

# LLM endpoints judges may call: the operator's to declare, never a user's (judges/endpoints.py
# has the JSON shape). Each names the environment variable holding its key; keys stay in the
# environment of the processes that call (workers; without a broker, the one process).
# None declared: only the offline baseline judges.
FAITHAUDIT_LLM_ENDPOINTS = os.environ.get("FAITHAUDIT_LLM_ENDPOINTS", "")
FAITHAUDIT_LLM_ENDPOINTS_FILE = os.environ.get("FAITHAUDIT_LLM_ENDPOINTS_FILE", "")
# Monitoring alerts' webhooks (monitor/webhooks.py): JSON {"name": "https://…"}, the operator's.
FAITHAUDIT_MONITOR_WEBHOOKS = os.environ.get("FAITHAUDIT_MONITOR_WEBHOOKS", "")
# Caps of an endpoint that declares none of its own; a judge may ask for less, never more.
FAITHAUDIT_LLM_TIMEOUT_SECONDS = float(os.environ.get("FAITHAUDIT_LLM_TIMEOUT_SECONDS", "60"))
FAITHAUDIT_LLM_MAX_RETRIES = int(os.environ.get("FAITHAUDIT_LLM_MAX_RETRIES", "5"))
FAITHAUDIT_LLM_MAX_CONCURRENCY = int(os.environ.get("FAITHAUDIT_LLM_MAX_CONCURRENCY", "16"))

# The JSON API's request bodies (api/strict_json.py, issue 34): a JSON body declared larger is
# refused with a 413 problem before it is read. 10 MiB holds a full JSON array of answers
# (1,000 of ~10 KB); NDJSON answers are streamed and not capped. Above
# DATA_UPLOAD_MAX_MEMORY_SIZE, Django's own cap answers first (also a 413).
FAITHAUDIT_API_MAX_BODY_BYTES = int(
    os.environ.get("FAITHAUDIT_API_MAX_BODY_BYTES", str(10 * 1024 * 1024))
)

# Security: production turns these on (see README, "Deploying").
if env_bool("DJANGO_PRODUCTION"):
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
