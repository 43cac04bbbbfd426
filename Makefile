# Two commands: `make demo` and `make test`. Both create .venv (pinned) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test install clean

$(STAMP): setup.cfg pyproject.toml requirements-lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c requirements-lock.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Tune the built-in 256^3 matmul with TGraph and with XGBoost, same budget, side by side.
demo: $(STAMP)
	$(BIN)/tgraph demo --workload matmul --trials 64

test: $(STAMP)
	$(BIN)/python -m pytest -q tests

clean:
	rm -rf $(VENV) *.egg-info build
