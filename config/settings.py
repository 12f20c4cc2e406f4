"""Settings, all from the environment (12-factor).

With nothing set the app runs on SQLite with Celery tasks executed in-process, so `make run`
works on a bare machine. With DATABASE_URL and CELERY_BROKER_URL set it runs on PostgreSQL and
Redis with separate workers.
"""

import os
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
    "annotate",
    "judges",
    "metrics",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Django's database sessions and model backend, reading their row per request by SQL instead
# of a compiled ORM query (config/auth.py).
SESSION_ENGINE = "config.auth"
AUTHENTICATION_BACKENDS = ["config.auth.UserBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotate:project-list"
LOGOUT_REDIRECT_URL = "login"

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
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Uploaded import files wait here for a worker: web and workers must share this directory.
# Never served over HTTP (no MEDIA_URL route): files are read by the import job only.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

# Celery: without a broker, tasks run in-process (the demo); with one, on workers.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_IGNORE_RESULT = True

# LLM endpoints judges may call: the operator's to declare, never a user's (judges/endpoints.py
# has the JSON shape). Each names the environment variable holding its key; keys stay in the
# environment of the processes that call (workers; without a broker, the one process).
# None declared: only the offline baseline judges.
FAITHAUDIT_LLM_ENDPOINTS = os.environ.get("FAITHAUDIT_LLM_ENDPOINTS", "")
FAITHAUDIT_LLM_ENDPOINTS_FILE = os.environ.get("FAITHAUDIT_LLM_ENDPOINTS_FILE", "")
# Caps of an endpoint that declares none of its own; a judge may ask for less, never more.
FAITHAUDIT_LLM_TIMEOUT_SECONDS = float(os.environ.get("FAITHAUDIT_LLM_TIMEOUT_SECONDS", "60"))
FAITHAUDIT_LLM_MAX_RETRIES = int(os.environ.get("FAITHAUDIT_LLM_MAX_RETRIES", "5"))
FAITHAUDIT_LLM_MAX_CONCURRENCY = int(os.environ.get("FAITHAUDIT_LLM_MAX_CONCURRENCY", "16"))

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
