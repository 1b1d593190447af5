# devmem-nic: the verbs. `make` alone lists them.
# Every target that needs tools runs `setup` first (fast when nothing changed), so they all
# work from a fresh clone.

SHELL         := bash
.SHELLFLAGS   := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS     += --no-print-directory --no-builtin-rules

VENV_PY   := .venv/bin/python
FILES_F   := rtl/files.f
WAIVERS   := rtl/verilator_waivers.vlt
# the protocol checker (testbench code), linted bound into the RTL (tb/checker/files.f, as tb/sim.py)
CHECKER_SRCS := $(shell sed -e 's/\#.*//' tb/checker/files.f)

# Overridable from the command line. LINT_SRCS replaces rtl/files.f for a sub-block lint:
#   make lint LINT_TOP=nic_csr LINT_SRCS="rtl/csr/generated/nic_csr_pkg.sv rtl/csr/generated/nic_csr.sv"
LINT_TOP    ?= nic_top
LINT_SRCS   ?=
LINT_FLAGS  ?=
JOBS        ?= auto
PYTEST_ARGS ?=
TEST        ?=
MODULE      ?=
REGRESS_SEEDS ?= 3
SHARD       ?= 1/1
COVERAGE    ?= 1
BUG         ?=
REGRESS_K   ?=
FORMAL_LONG ?= 0
FORMAL_ONLY ?=
FORMAL_JOBS ?= 2
REGRESS_SCHEDULER ?=
SYNTH_ARGS  ?=
NO_ROUTE    ?=

.PHONY: help setup test test-rtl lint regs formats demo waves bench regress formal synth synth-pnr synth-depth clean

help: ## list the targets (default)
	@echo "devmem-nic: make TARGET [VAR=value]"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z_-]*:.*## / {printf "  %-9s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))
	@echo "variables: LINT_TOP=$(LINT_TOP) JOBS=$(JOBS) PYTEST_ARGS='$(PYTEST_ARGS)' TEST=<pytest -k expression> MODULE=<rtl module>"
	@echo "formal:    FORMAL_LONG=$(FORMAL_LONG) (1: also tasks tagged long) FORMAL_ONLY=<blocks> FORMAL_JOBS=$(FORMAL_JOBS) BUG=<name of tests/bugs/*.patch> (docs/verification.md)"
	@echo "regress:   REGRESS_SEEDS=$(REGRESS_SEEDS) SHARD=$(SHARD) COVERAGE=$(COVERAGE) (0|1|toggle) BUG=<name of tests/bugs/*.patch> REGRESS_K=<pytest -k>"
	@echo "           JOBS=<LocalCluster workers> REGRESS_SCHEDULER=tcp://HOST:PORT (an existing Dask cluster; docs/verification.md)"
	@echo "synth:     SYNTH_ARGS='--configs 64_128_1q,... --flows ecp5,xilinx,ecp5-hier --jobs 2'; synth-pnr: NO_ROUTE=1 (placement only); synth-depth: SYNTH_ARGS='--blocks u_desc,u_tx.u_fetch --flows xilinx' (docs/synthesis.md)"

setup: ## install apt packages, .venv and pinned Python deps if missing or changed (idempotent)
	@scripts/setup.sh

# pytest exits 5 when it collected no test: a selection (PYTEST_ARGS="-k nosuch") that
# matches nothing is a failure, not a silent pass.
test: setup ## run the pytest suite in tests/ in parallel, all but the regress_only tests (JOBS=auto, PYTEST_ARGS=...)
	@rc=0; $(VENV_PY) -m pytest -n $(JOBS) -m "not regress_only" $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "test: no test matched$(if $(PYTEST_ARGS), PYTEST_ARGS='$(PYTEST_ARGS)',) (pytest exit 5)"; rc=1; fi; exit $$rc

test-rtl: setup ## run the tests that cover RTL module MODULE=name (derived from the tests' own builds; MODULE=list: the map)
	@[ -n "$(MODULE)" ] || { echo "test-rtl: say which module, e.g. make test-rtl MODULE=rx_split_dma (MODULE=list: the map)"; exit 2; }
	@JOBS="$(JOBS)" $(VENV_PY) -m tb.rtl_map "$(MODULE)" -- $(PYTEST_ARGS)

lint: setup ## Verilator -Wall lint of rtl/files.f with the waivers, then with tb/checker/ bound in (LINT_TOP=nic_top, LINT_SRCS=...); mypy over driver/ models/ nicsim/ bench/ tb/scenario/
	@. scripts/env.sh; \
	if [ -n "$(LINT_SRCS)" ]; then srcs="$(LINT_SRCS)"; from="LINT_SRCS"; else \
	  srcs=$$(sed -e 's/#.*//' -e 's/[[:space:]]*$$//' $(FILES_F) | grep -v '^$$' || true); from="$(FILES_F)"; fi; \
	[ -n "$$srcs" ] || { echo "lint: $$from lists no sources"; exit 1; }; \
	echo "lint: verilator --lint-only -Wall --top-module $(LINT_TOP) ($$(echo $$srcs | wc -w) files from $$from)"; \
	verilator --lint-only -Wall --quiet-stats --top-module $(LINT_TOP) $(LINT_FLAGS) $(WAIVERS) $$srcs; \
	if [ -z "$(LINT_SRCS)" ] && [ "$(LINT_TOP)" = nic_top ]; then \
	  echo "lint: the same with the protocol checker bound into nic_top ($(words $(CHECKER_SRCS)) files from tb/checker/files.f)"; \
	  verilator --lint-only -Wall --quiet-stats --timescale 1ns/1ps --top-module nic_top $(LINT_FLAGS) $(WAIVERS) $$srcs $(CHECKER_SRCS); fi; \
	echo "lint: verilator clean"
	@echo "lint: mypy driver/ models/ nicsim/ bench/ tb/scenario/ and the tb/ modules they import (pyproject.toml [tool.mypy])"
	@$(VENV_PY) -m mypy --no-error-summary && echo "lint: mypy clean"

regs: setup ## regenerate the CSR RTL, driver/regs.py and docs/registers.md from rtl/csr/nic_csr.rdl
	@$(VENV_PY) scripts/gen_regs.py

formats: setup ## regenerate the DMA formats (SV package, models/formats.py, C header, docs tables) from rtl/formats/dma_formats.toml
	@$(VENV_PY) scripts/gen_formats.py

demo: setup ## the devmem story on the RTL with a report in build/demo/ (nicsim demo)
	@.venv/bin/nicsim demo

waves: setup ## re-run TEST=<pytest -k expr> with FST waves; GTKWave if a display, else PNGs
	@[ -n "$(TEST)" ] || { echo "waves: say which test, e.g. make waves TEST=rx_parser"; exit 1; }
	@mkdir -p build/waves; touch build/.waves-start; rc=0; \
	WAVES=1 $(VENV_PY) -m pytest -p no:xdist -k "$(TEST)" $(PYTEST_ARGS) || rc=$$?; \
	new=$$(find build/waves -name '*.fst' -newer build/.waves-start | sort); \
	if [ -z "$$new" ]; then echo "waves: no waveform written (no RTL test matched TEST='$(TEST)'?)"; exit $$rc; fi; \
	echo "waves: written:"; echo "$$new" | sed 's/^/  /'; \
	if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ] && command -v gtkwave >/dev/null; then \
	  for f in $$new; do .venv/bin/nicsim waves "$$f" --gtkw "$${f%.fst}.gtkw" && gtkwave --save="$${f%.fst}.gtkw" "$$f" & done; \
	else for f in $$new; do .venv/bin/nicsim waves "$$f" -o "$${f%.fst}.png" || true; done; fi; exit $$rc

bench: setup ## benchmarks -> build/bench/bench.json + plots: RX/TX line rate, TX with TSO (on the RTL), DMA efficiency, latency, devmem goodput, sim speed, memory, cluster (docs/cluster.md)
	@$(VENV_PY) -m bench.rx_linerate
	@$(VENV_PY) -m bench.rx_metrics
	@$(VENV_PY) -m bench.tx_linerate
	@$(VENV_PY) -m bench.tx_tso --backend rtl
	@$(VENV_PY) -m bench.sim_speed
	@$(VENV_PY) -m bench.sim_memory
	@$(VENV_PY) -m bench.cluster
	@$(VENV_PY) -m bench.collect

# make regress [REGRESS_SEEDS=3] [SHARD=i/K] [JOBS=auto] [COVERAGE=1|0|toggle] [BUG=<tests/bugs/NAME.patch>] [REGRESS_K=<pytest -k>] [REGRESS_SCHEDULER=tcp://HOST:PORT]
regress: setup ## every RTL test x REGRESS_SEEDS seeds on Dask (LocalCluster or REGRESS_SCHEDULER): JUnit, coverage, summary in build/regress/
	@REGRESS_SEEDS="$(REGRESS_SEEDS)" SHARD="$(SHARD)" JOBS="$(JOBS)" COVERAGE="$(COVERAGE)" BUG="$(BUG)" \
	REGRESS_K="$(REGRESS_K)" REGRESS_SCHEDULER="$(REGRESS_SCHEDULER)" $(VENV_PY) -m tb.regress

# make formal [FORMAL_LONG=1] [FORMAL_ONLY=axi_dma_wr,sync_fifo] [FORMAL_JOBS=2] [BUG=<tests/bugs/NAME.patch>]
formal: setup ## SymbiYosys proofs (tb/formal/*.sby): every property with its result, kind and depth; BUG= must fail
	@FORMAL_LONG="$(FORMAL_LONG)" FORMAL_ONLY="$(FORMAL_ONLY)" FORMAL_JOBS="$(FORMAL_JOBS)" BUG="$(BUG)" \
	$(VENV_PY) -m tb.formal.run

synth: setup ## Yosys synthesis of nic_top, 5 configs x ECP5/Xilinx/per module: LUTs, FFs, RAMs, memories, latches, logic depth -> build/synth/ (1-3 h)
	@$(VENV_PY) scripts/synth.py $(SYNTH_ARGS)

synth-pnr: setup ## nextpnr-ecp5 place and route of the 64-bit configs at 156.25 MHz: Fmax, critical path (NO_ROUTE=1: placement only; hours)
	@$(VENV_PY) scripts/synth.py --pnr $(if $(NO_ROUTE),--no-route) $(SYNTH_ARGS)

synth-depth: setup ## logic depth per block (each synthesized alone, ECP5 LUT4 and Xilinx LUT6 levels) at 64_128_1q and 512_1024_1q, ranked (tens of minutes)
	@$(VENV_PY) scripts/synth.py --depth $(SYNTH_ARGS)

clean: ## remove build/ (simulator builds, results, waves)
	rm -rf build
