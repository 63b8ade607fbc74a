# Set-up and everyday commands. `make run` and `make test` work on a fresh machine with
# python3 (>= 3.10, with venv) and make: each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
# Extras the demo needs (see pyproject.toml): MuJoCo and friends for the simulated cell, and the
# picking cell's own (the report's plots, the cell file). `make run` installs only these.
RUN_EXTRAS ?= sim,onboard
# Extras the tests need. torch-based parts install with the `learned` extra.
# pyrealsense2 (realsense) needs the system library libusb-1.0 (Debian: libusb-1.0-0).
TEST_EXTRAS ?= dev,gripper,realsense,sim,ray,learned,onboard,calib
BIN := $(VENV)/bin

.PHONY: install install-run run test test-slow test-nojit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# MuJoCo 4 split its package in three (mujoco-core, mujoco-studio, mujoco); pip going back to
# the 3.x that pyproject.toml asks for over it leaves 4's files under the same import name, so a
# venv that has MuJoCo 4 has it taken out first.
drop_mujoco4 = if $(BIN)/python -m pip show -q mujoco-core >/dev/null 2>&1; then \
	echo "taking out MuJoCo 4 (this project runs on 3.x: pyproject.toml)"; \
	$(BIN)/python -m pip uninstall -y -q mujoco mujoco-core mujoco-studio mujoco-studio-wasm; fi

# One stamp per set of extras, so that `make test` after `make run` adds only what is missing.
# Each install ends by compiling the planning kernels into numba's cache (`graspline warm-up`:
# three minutes on a fresh 2-core machine, a few seconds once cached), as a compiled extension
# is built at install: the demo's first trial and the tests then load them.
$(BIN)/.installed-run-$(RUN_EXTRAS): pyproject.toml | $(BIN)/python
	@$(drop_mujoco4)
	$(BIN)/python -m pip install -q -e '.[$(RUN_EXTRAS)]'
	$(BIN)/graspline warm-up
	rm -f $(BIN)/.installed-run-* && touch $@

$(BIN)/.installed-test-$(TEST_EXTRAS): pyproject.toml | $(BIN)/python
	@$(drop_mujoco4)
	$(BIN)/python -m pip install -q -e '.[$(TEST_EXTRAS)]'
	$(BIN)/graspline warm-up
	rm -f $(BIN)/.installed-test-* && touch $@

install-run: $(BIN)/.installed-run-$(RUN_EXTRAS)

install: $(BIN)/.installed-test-$(TEST_EXTRAS)

# The main job with no hardware: the picking loop on the simulated cell (about 20 trials),
# ending with the validation report under out/demo/.
run: install-run
	$(BIN)/graspline demo --out out/demo

# Runs a pytest command; its "collected no tests" (exit status 5) is named, since make itself
# reports every failing recipe with status 2.
pytest_run = echo "$(1)"; status=0; $(1) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make $@: pytest collected no tests" >&2; fi; exit $$status
# librealsense can abort the whole test process while Python collects its objects late (a
# destructor run after its context is gone: librealsense issue 14470). A pass killed by a
# signal (status above 128) runs once more and says so; a test that fails is not run again.
pytest_run_native = echo "$(1)"; status=0; $(1) || status=$$?; \
	if [ $$status -gt 128 ]; then echo "make $@: the test process died (status $$status: librealsense aborted it); running the pass once more" >&2; \
	status=0; $(1) || status=$$?; fi; \
	if [ $$status -eq 5 ]; then echo "make $@: pytest collected no tests" >&2; fi; exit $$status

# One pytest worker per core (pytest-xdist), each test file on one worker so that its module
# fixtures (an emulator, a simulated cell) are built once; then the tests that use librealsense
# in one process of their own (marked `realsense`: it is not safe in two processes at once).
# The tests marked `slow` (grasp databases of whole demos, Ray clusters, CoACD on scans: tens
# of seconds or more each) run in `make test-slow`; CI runs both.
test: install
	@$(call pytest_run,$(BIN)/python -m pytest -n 2 --dist loadfile -m "not realsense and not slow")
	@$(call pytest_run_native,$(BIN)/python -m pytest -m "realsense and not slow")

test-slow: install
	@$(call pytest_run,$(BIN)/python -m pytest -n 2 --dist loadfile -m "slow and not realsense")

# The Numba kernels run as plain Python (NUMBA_DISABLE_JIT=1) against their references, so
# that coverage sees inside them and their pure-Python paths stay honest. Only the tests that
# compare a kernel with its reference: they take seconds of CPU without JIT. The depth kernel
# (scoring/_physical.depth_kernel) has no reference; its behaviour tests run instead (under a minute).
KERNEL_TESTS := tests/scoring/test_kernel_vs_reference.py tests/scoring/test_normals.py \
	tests/scoring/test_depth_terms.py tests/vision/test_kernels.py \
	tests/scoring/test_search.py::test_non_max_suppression_drops_near_duplicates_and_keeps_theta_twins_out \
	tests/scoring/test_search.py::test_non_max_suppression_respects_top_k \
	tests/offline_sim/test_kinematic.py::test_object_motion_kernel_matches_its_reference_and_bounds_the_motion \
	tests/offline_sim/test_kinematic.py::test_closing_step_kernel_matches_the_numpy_step

test-nojit: install
	@$(call pytest_run,NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q $(KERNEL_TESTS))

bench: install
	$(BIN)/python -m benchmarks.bench_scoring

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
