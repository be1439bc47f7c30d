# The two quickstart commands are `make demo` and `make test`; both set up what they need.
PYTHON ?= python3.11
SAM_PYTHON ?= $(shell ls -d $$HOME/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n 1 || command -v python3.12)
VENV := .venv
SAM_VENV := .venv-sam
export SAM_CLI_TELEMETRY := 0
export AWS_DEFAULT_REGION ?= us-east-1
export AWS_EC2_METADATA_DISABLED := true

.PHONY: setup demo test lint typecheck static unit clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	# torch is pinned inside the parse extra, in this same command (CPU build on local disk)
	$(VENV)/bin/pip install --quiet -e ".[parse,local,dev]"
	touch $@

setup: $(VENV)/.installed

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

unit: setup
	$(VENV)/bin/pytest -n 2 --dist loadgroup

test: lint typecheck unit

clean:
	rm -rf $(VENV) $(SAM_VENV) node_modules .aws-sam
