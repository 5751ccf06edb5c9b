"""Settings from the environment.

With no variables set this is the embedded mode (`make run`): SQLite under var/, Celery eager,
media under var/media/, whitenoise for static files. `DJANGO_ENV=production` switches to
production, which refuses to start without a secret, PostgreSQL and a real broker.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.storage_config import media_storage_from_env
from corpus import protocol

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("REFIG_VAR_DIR", BASE_DIR / "var"))

DJANGO_ENV = os.environ.get("DJANGO_ENV", "embedded").strip().lower()
PRODUCTION = DJANGO_ENV == "production"


def env_flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    return [item.strip() for item in raw.split(",") if item.strip()] if raw else default


def refuse(message: str) -> None:
    raise ImproperlyConfigured(f"Production settings: {message}")


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if PRODUCTION and len(SECRET_KEY) < 50:
    refuse("DJANGO_SECRET_KEY must be set to a random string of at least 50 characters.")
if not SECRET_KEY:
    SECRET_KEY = "embedded-mode-only-not-secret-" + "x" * 40
# The key of annotators' pseudonyms in exports and releases (core.pseudonyms): never SECRET_KEY, whose embedded default
# is public. Unset, a random key is generated once into VAR_DIR/pseudonym.key (0600) and kept there.
REFIG_PSEUDONYM_KEY = os.environ.get("REFIG_PSEUDONYM_KEY", "")

# Off unless DJANGO_DEBUG=1 says otherwise, in embedded mode too: a debug page shows settings, local variables and
# the session to whoever triggers an error (an annotator would see configuration and artifact ids).
DEBUG = env_flag("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "testserver"])
if PRODUCTION and not ALLOWED_HOSTS:
    refuse("DJANGO_ALLOWED_HOSTS must list the host names the app is served under.")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's assets served by the app itself: /api/docs/ works offline
    "axes",
    "core",
    "corpus",
    "agents",
    "scoring",
    "annotation",
    "bt_elo",
    "demo",
]

MIDDLEWARE = [
    # First, so no URL resolver, database lookup or file path ever sees a NUL or other control character.
    "core.middleware.ControlCharacterMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "annotation.middleware.AnnotatorErrorMiddleware",
    "core.middleware.ContentSecurityPolicyMiddleware",
    # Near the end, so its process_exception runs first: a database or broker outage is a 503, not a 500 (AxesMiddleware
    # below has no exception hook).
    "core.outages.OutageMiddleware",
    # Last, as django-axes requires: turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
                "config.context.roles",
                "config.context.demo",
            ],
        },
    }
]

# --- database -------------------------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if PRODUCTION:
    if not DATABASE_URL:
        refuse("DATABASE_URL must point at PostgreSQL (postgres://user:pass@host:5432/name).")
    if not DATABASE_URL.startswith(("postgres://", "postgresql://", "pgsql://")):
        refuse(
            f"DATABASE_URL must be PostgreSQL; SQLite and others are refused (got {DATABASE_URL.split(':', 1)[0]!r})."
        )
SQLITE_OPTIONS = {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
    if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        DATABASES["default"]["OPTIONS"] = SQLITE_OPTIONS
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "refig.sqlite3",
            # IMMEDIATE: a writer takes the write lock when its transaction begins, so two writers queue (for up to
            # `timeout` seconds) instead of failing to upgrade; WAL lets readers go on while one writes.
            "OPTIONS": SQLITE_OPTIONS,
            # A file, not shared memory: threads of a live server then wait for the lock instead of failing at once.
            "TEST": {"NAME": str(VAR_DIR / "test-refig.sqlite3")},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # django-axes first: it refuses a locked-out (username, address) pair before the password is checked.
    "core.auth.LoginThrottleBackend",
    "core.auth.RoleAwareModelBackend",
]
# Five wrong passwords for one username from one address lock that pair out for 15 minutes (answer 429); a correct
# login resets the count. Keyed on the pair so a stranger cannot lock a colleague out from elsewhere.
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# URL names (django.shortcuts.resolve_url reverses them)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# --- files ----------------------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", VAR_DIR / "static"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "templates" / "static"]
MEDIA_ROOT = Path(os.environ.get("DJANGO_MEDIA_ROOT", VAR_DIR / "media"))
MEDIA_URL = "/media/"
# With DEBUG off, runserver (`make run`) serves no static files itself: whitenoise finds them in the apps and
# templates/static directly in embedded mode; production serves the collected, hashed copies.
WHITENOISE_USE_FINDERS = not PRODUCTION
# Media: the local filesystem, or an S3-compatible object store (REFIG_MEDIA_STORAGE=s3; core/storage_config.py).
STORAGES = {
    "default": media_storage_from_env(os.environ),
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Uploaded/imported files never go through Django's upload handlers, but cap them anyway.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# --- celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = env_flag("CELERY_TASK_ALWAYS_EAGER", not PRODUCTION and not CELERY_BROKER_URL)
if PRODUCTION:
    if not CELERY_BROKER_URL:
        refuse("CELERY_BROKER_URL must point at Redis (redis://) or RabbitMQ (amqp://).")
    if not CELERY_BROKER_URL.startswith(("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://")):
        refuse("CELERY_BROKER_URL must be a Redis or RabbitMQ URL.")
    if CELERY_TASK_ALWAYS_EAGER:
        refuse("CELERY_TASK_ALWAYS_EAGER is refused in production: tasks must go to workers.")
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "memory://"
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Longer than the slowest task (a render batch or a judge call with retries), or a second worker re-runs it.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 4 * 3600}
CELERY_TASK_DEFAULT_QUEUE = "default"
# `celery -A config beat` (the compose file's beat service) sends these; each task is idempotent.
CELERY_BEAT_SCHEDULE = {
    # Abandoned leases go back to the pool even while nobody asks for items (item_next also expires them lazily).
    "annotation-leases-expire": {"task": "annotation.leases_expire", "schedule": 60.0},
    # Render batches whose worker died (its hold on the artifacts lapsed) are sent again: minutes, not the 4 h above.
    "agents-render-sweep": {
        "task": "agents.render_sweep",
        "schedule": float(os.environ.get("REFIG_RENDER_SWEEP_SECONDS", 60)),
    },
}
CELERY_TASK_ROUTES = {
    "agents.*": {"queue": "render"},
    "scoring.*": {"queue": "judge"},
    "bt_elo.*": {"queue": "analysis"},
}

CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ["REDIS_CACHE_URL"]}
    if os.environ.get("REDIS_CACHE_URL")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "refig"}
}
# With a cache every web process shares (Redis), sessions are read from it: one database query less on every request.
# A per-process cache would keep a session alive in one process after a logout in another, so not without Redis.
if os.environ.get("REDIS_CACHE_URL"):
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# --- API ------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    # Browsers by their session (with CSRF on every write); scripts by `Authorization: Token <key>` from
    # `manage.py api_token USER`. No HTTP Basic: it would send passwords on every call and skip both CSRF and lockout.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "refig-study API",
    "DESCRIPTION": "Corpus, artifacts, judge scores, blinded comparisons and analysis tables.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/schema/ and /api/docs/ list every endpoint and field: coordinators, researchers and staff only.
    "SERVE_PERMISSIONS": ["core.permissions.IsStaffResearcher"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation documents the {"error", "detail"} bodies of core.api.exception_handler (400/403/404/409).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "core.api.document_error_responses"],
}

# --- security -------------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SECURE_SSL_REDIRECT = env_flag("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", 31536000))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A refused request (403) is routine: one line, no traceback.
    "filters": {"forbidden_one_line": {"()": "core.middleware.ForbiddenOneLineFilter"}},
    "formatters": {"timed": {"format": "[{asctime}] {message}", "style": "{"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["forbidden_one_line"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
}
# REFIG_REQUEST_LOG (`make run` sets var/log/requests.log): runserver's line per request, and the 4xx refusals, go
# to that file instead of the terminal, which keeps showing the URL and the accounts; server errors (5xx) go to both.
REQUEST_LOG = os.environ.get("REFIG_REQUEST_LOG", "")
if REQUEST_LOG:
    Path(REQUEST_LOG).parent.mkdir(parents=True, exist_ok=True)
    LOGGING["handlers"] |= {
        "requests": {
            "class": "logging.FileHandler",
            "filename": REQUEST_LOG,
            "formatter": "timed",
            "filters": ["forbidden_one_line"],
            "delay": True,
        },
        "console_errors": {"class": "logging.StreamHandler", "level": "ERROR", "filters": ["forbidden_one_line"]},
    }
    LOGGING["loggers"] = {
        "django.server": {"handlers": ["requests"], "level": "INFO", "propagate": False},
        "django.request": {"handlers": ["requests", "console_errors"], "level": "WARNING", "propagate": False},
    }

# --- domain settings --------------------------------------------------------------------------
REFIG = {
    # Rendering: long edge of the side-by-side PNG and of the thumbnail, LibreOffice timeout.
    "RENDER_LONG_EDGE": int(os.environ.get("REFIG_RENDER_LONG_EDGE", protocol.RENDER_LONG_EDGE)),
    "THUMBNAIL_LONG_EDGE": protocol.THUMBNAIL_LONG_EDGE,
    "RENDER_TIMEOUT_SECONDS": float(os.environ.get("REFIG_RENDER_TIMEOUT", 60)),
    "SOFFICE_BINARY": os.environ.get("REFIG_SOFFICE", "soffice"),
    # How long a render batch's hold on its artifacts lasts unless renewed (it renews every quarter of this while it
    # works): the longest a killed render worker's artifacts wait before agents.render_sweep sends them again.
    "RENDER_CLAIM_SECONDS": float(os.environ.get("REFIG_RENDER_CLAIM_SECONDS", 120)),
    # Largest image the corpus importer decodes (pixels); the paper's biggest figure is 13.65 MP.
    "MAX_IMAGE_PIXELS": int(os.environ.get("REFIG_MAX_IMAGE_PIXELS", 60_000_000)),
}
