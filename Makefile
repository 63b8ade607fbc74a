# Set-up and everyday commands. `make run` and `make test` work on a fresh machine with
# python3 (>= 3.10, with venv) and make: each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
# Extras the tests need (see pyproject.toml). torch-based parts install with the `learned` extra.
# pyrealsense2 (realsense) needs the system library libusb-1.0 (Debian: libusb-1.0-0).
TEST_EXTRAS ?= dev,gripper,realsense,sim,ray,learned,onboard,calib
BIN := $(VENV)/bin

.PHONY: install run test bench clean

$(BIN)/.installed-$(TEST_EXTRAS): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(TEST_EXTRAS)]'
	rm -f $(BIN)/.installed-* && touch $@

install: $(BIN)/.installed-$(TEST_EXTRAS)

# The main job with no hardware: the picking loop on the simulated cell (about 20 trials),
# ending with the validation report under out/demo/.
run: install
	$(BIN)/graspline demo --out out/demo

test: install
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python benchmarks/bench_scoring.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
