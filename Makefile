# The two commands: `make run` (the demo on SQLite, tasks in-process) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
SIZE ?= default
# `make test` runs the suite on this many processes (pytest-xdist; 0: one process, no xdist)
TEST_WORKERS ?= 2

.PHONY: run test lint format bench worker install clean

$(BIN)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e ".[dev]"
	touch $@

install: $(BIN)/.installed

# confseq (the monitoring tests' reference for the confidence sequences, tests only): its
# sdist pins pybind11 2.6, which does not build on Python 3.11, and scikit-build imports
# `ninja`, which django-ninja shadows in our venv; so its wheel is built in a throwaway venv
# with a newer pybind11 (the C++ extension needs Boost's headers: apt-get install libboost-dev).
$(BIN)/.confseq: $(BIN)/.installed
	@test -f /usr/include/boost/version.hpp || { echo "confseq needs Boost's headers: apt-get install libboost-dev" >&2; exit 1; }
	rm -rf .build-confseq
	$(BIN)/python -m venv .build-confseq
	.build-confseq/bin/pip install --quiet scikit-build cmake "pybind11>=2.10" setuptools wheel
	.build-confseq/bin/pip wheel --quiet --no-build-isolation --no-deps confseq==0.0.11 -w .build-confseq/wheels
	$(BIN)/python -m pip install --quiet -c requirements.lock .build-confseq/wheels/confseq-*.whl
	rm -rf .build-confseq
	touch $@

run: install
	mkdir -p staticfiles  # WhiteNoise warns at start when STATIC_ROOT is missing
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_load --address $(HOST):$(PORT)
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

worker: install
	$(BIN)/celery -A config worker --loglevel=INFO

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint $(BIN)/.confseq
	$(BIN)/lint-imports
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

bench: install
	$(BIN)/python -m bench --size $(SIZE)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles

# Reruns tests/reliability/ and rewrites tests/RELIABILITY.md (set DATABASE_URL,
# CELERY_BROKER_URL and REQUIRE_SERVICES=1 for the full run).
.PHONY: reliability
reliability: install
	$(BIN)/python -m tests.reliability.report

# Mutation testing (not CI; 13,700 mutants of metrics alone: hours even on 2 free cores):
# mutmut mutates the statistics, the report assembly, the quote matcher, the queue's
# double-labelling quota and the judge's verdict
# parser, runs the fast tests that reach each mutant, then prints the per-module figures for
# tests/MUTATION.md (survivors are explained there by hand). MUTANTS narrows the run, e.g.
# make mutation MUTANTS="'metrics.stats.prevalence.*'". The report assembly is every module of
# metrics/services/ (the sample of tests/MUTATION.md draws from all of it).
MUTANTS ?= 'metrics.stats.*' 'metrics.services.*' \
	'annotate.quotes.*' 'annotate.queue_order.*' \
	'judges.backends.openai_backend.x_verdict_parse*' \
	'judges.backends.openai_backend.x_verdict_for_token*' \
	'judges.backends.openai_backend.x_confidence_from_logprobs*'
.PHONY: mutation
mutation: install
	nice -n 10 $(BIN)/mutmut run $(MUTANTS) || true
	$(BIN)/python -m tests.mutation_summary
