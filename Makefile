# The two quickstart commands are `make demo` and `make test`; both set up what they need.
PYTHON ?= python3.11
# sam build needs the Lambda runtime's exact Python (3.12) on PATH.
PYTHON312 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12.*/bin/python3.12) $(shell command -v python3.12))
VENV := .venv
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
# The template's security scanner, in its own environment (its pins clash with docling's).
CHECKOV_VENV := .venv-checkov
# The AWS CLI the docs' commands are run with by the tests (awscli v1 pins its own
# botocore), in its own environment.
AWSCLI_VENV := .venv-awscli
PARSE_IMAGES := -x PlanFunction -x ParseTier1Function -x ParseTier2Function -x ParseTier3Function
export SAM_CLI_TELEMETRY := 0
export AWS_DEFAULT_REGION ?= us-east-1
export AWS_EC2_METADATA_DISABLED := true

.PHONY: setup system-packages demo test quick lint typecheck static pytest bench chaos clean chromium screenshots lock preflight schemas

$(VENV)/.installed: pyproject.toml layers/docling/requirements.txt functions/parse/requirements-nodeps.txt tools/richdoc_tools/torchvision_compat.py
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	# torch is pinned inside the parse extra, in this same command (CPU build on local disk).
	# The layer's lock constrains what the layer ships (boto3, pydantic, docling-core, ...),
	# so the tests run those versions, not whatever the registry has newest today.
	$(VENV)/bin/pip install --quiet -e ".[parse,local,dev]" -c layers/docling/requirements.txt
	# The light PDF pipeline's models, as the parse image installs them: without the
	# non-headless OpenCV their packages ask for (functions/parse/requirements-nodeps.txt).
	$(VENV)/bin/pip install --quiet --no-deps -r functions/parse/requirements-nodeps.txt
	# PyPI's torchvision cannot load its compiled operators beside the CPU torch; this
	# hook lets it import without them (richdoc_tools/torchvision_compat.py says why).
	$(VENV)/bin/python -c "from richdoc_tools.torchvision_compat import install_pth; install_pth()"
	touch $@

$(SAM_VENV)/.installed:
	$(PYTHON312) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==1.170.0
	touch $@

$(CHECKOV_VENV)/.installed:
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet checkov==3.3.30
	touch $@

$(AWSCLI_VENV)/.installed:
	$(PYTHON) -m venv $(AWSCLI_VENV)
	$(AWSCLI_VENV)/bin/pip install --quiet awscli==1.46.3
	touch $@

# The browser tests drive Debian's Chromium through Playwright (whose own browser builds
# come from a CDN that CI machines may not reach). Installing it needs root, as in CI.
CHROMIUM := /usr/bin/chromium
chromium:
	@test -x $(CHROMIUM) || (apt-get update && apt-get install -y chromium)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

setup: $(VENV)/.installed

# Debian packages the tests use: bubblewrap runs the parse handlers on a read-only root
# (tests/parse/test_lambda_filesystem.py). Installed when missing and apt-get is there;
# without it that one test is skipped, and says so.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
system-packages:
	@command -v bwrap >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 \
		&& $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq bubblewrap; } \
		|| echo "bubblewrap is not installed: the read-only filesystem test will be skipped"

# Runs every sample through the embedded stack. richdoc exits 1 when any job failed,
# and samples/ holds deliberately broken files, so 1 is the expected outcome here;
# anything else (2 usage, crashes) fails the target.
demo: setup
	$(VENV)/bin/richdoc run samples/ --clarify; status=$$?; test $$status -le 1

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

# Template checks that need the SAM CLI, node and checkov; the Python-side checks are in
# tests/unit/test_template.py. Image functions need Docker to build, so they are excluded.
# checkov's findings that do not apply are skipped in the template, each with its reason.
static: setup $(SAM_VENV)/.installed node_modules/.installed $(CHECKOV_VENV)/.installed
	$(SAM) validate --lint
	$(CHECKOV_VENV)/bin/checkov -f template.yaml --framework cloudformation --quiet --compact --skip-download
	node_modules/.bin/asl-validator --json-path statemachine/pipeline.asl.json
	PATH="$(dir $(PYTHON312)):$$PATH" $(SAM) build $(PARSE_IMAGES) --build-dir .aws-sam/build
	$(VENV)/bin/python scripts/check_package_size.py .aws-sam/build

# The published JSON Schemas (schemas/) from the models in richdoc_client; a test fails
# when the committed files are stale.
schemas: setup
	$(VENV)/bin/python scripts/generate_schemas.py

# Before deploying: what would fail on this account and what fixes it (docs/operations.md).
# ARGS passes options, e.g. make preflight ARGS="--parameter-overrides AccountProfile=small".
preflight: setup
	$(VENV)/bin/richdoc deploy check $(ARGS)

# The layer's lock (layers/docling/requirements.txt) from requirements.in, at the versions
# .venv runs, for Lambda's Python 3.12 (tests/unit/test_layer_lock.py holds them equal).
lock: setup $(SAM_VENV)/.installed
	$(VENV)/bin/python scripts/lock_layer.py --python $(SAM_VENV)/bin/python

# Every lane (tests/unit, aws, parse, e2e, browser).
pytest: setup system-packages node_modules/.installed chromium $(AWSCLI_VENV)/.installed
	$(VENV)/bin/pytest -n 2 --dist loadfile

test: chromium lint typecheck static pytest

# The fast lanes only (pure and moto-backed tests; no docling worker, no state machine):
# a minute or two while working. `make test` is what CI runs.
quick: setup node_modules/.installed
	$(VENV)/bin/pytest -n 2 --dist loadfile tests/unit tests/aws

bench: setup
	$(VENV)/bin/python -m bench

# The long chaos run: 200 documents with injected faults at 5 % for several seeds, checked
# against a fault-free run; writes the figures into docs/reliability.md (about 15 minutes).
chaos: setup
	$(VENV)/bin/python scripts/chaos.py

# The console's screenshots in docs/ (and the README's), from a run on samples/.
screenshots: setup chromium
	$(VENV)/bin/python scripts/console_screenshots.py

clean:
	rm -rf $(VENV) $(SAM_VENV) $(CHECKOV_VENV) $(AWSCLI_VENV) node_modules .aws-sam
