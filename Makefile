# Two targets do all the set-up on a fresh machine: `make run` and `make test`.
VENV   := .venv
PY     := $(CURDIR)/$(VENV)/bin/python
STAMP  := $(VENV)/.installed
NS3    := $(VENV)/.installed-test-extras
export PYSPARK_PYTHON        := $(PY)
export PYSPARK_DRIVER_PYTHON := $(PY)

# bash with pipefail: a command piped through a filter still fails the recipe.
SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -c

# pip's output without two kinds of noise; errors stay. This machine's pip configuration
# names index folders that do not exist (a "Location ... is ignored" warning per package),
# and setuptools announces every editable install in a banner: dropped from its first
# line to the source line after its second "!!", at most 12 lines, so a banner of
# another shape shows rather than hiding what follows it.
QUIET_PIP := awk '/is ignored: it is neither a file nor a directory/ { next } \
    /BuildBackendWarning: Editable installation\./ { left = 12; bangs = 0 } \
    left > 0 { left--; if (bangs == 2) left = 0; else if ($$0 ~ /^ *!!$$/) bangs++; next } \
    { print }'

.PHONY: run test test-full setup bench clean

setup: $(STAMP)

# Mininet comes from Debian and lives in the system Python, hence --system-site-packages;
# babeld (Debian's too) routes the emulated hosts under [network] routing = "babel".
$(STAMP): setup.cfg pyproject.toml
	@if [ "$$(id -u)" = 0 ]; then \
	    missing=""; \
	    /usr/bin/python3 -c 'import mininet.net' 2>/dev/null || missing=" mininet"; \
	    command -v babeld >/dev/null || missing="$$missing babeld"; \
	    if [ -n "$$missing" ]; then echo "installing Debian's$$missing"; \
	        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi; fi
	@test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@echo "installing into $(VENV): pip, then this project with its test extra (editable)"
	@$(PY) -m pip install -q --upgrade pip 2>&1 | $(QUIET_PIP)
	@$(PY) -m pip install -q -e '.[test]' 2>&1 | $(QUIET_PIP)
	@echo "compiling the hop kernel into numba's cache"
	@$(PY) -c 'from emulator.transport import warm_up; warm_up()'
	@touch $@

# What only the tests need, so that `make run` does without it: ns-3 and SUMO (the ns3
# and sumo extras, 0.3 GB and 0.15 GB) for the ns-3 cross-checks and real SUMO runs, and
# Debian's tshark (Wireshark's dissectors) for the packet captures of tests/test_pcap.py,
# installed without the setuid dumpcap question (debconf answered first). Their own
# stamp, so that an existing venv gets them too. While they download, two processes
# compile the routing protocols' and the MAC's kernels into numba's cache (AODV's alone
# takes about as long as all the others): else the first tests to run AODV compile it,
# in both workers at once.
$(NS3): $(STAMP)
	@echo "compiling the routing and MAC kernels into numba's cache, beside the downloads"
	@$(PY) -m emulator.kernels aodv > $(VENV)/kernels-aodv.log 2>&1 & aodv=$$!; \
	$(PY) -m emulator.kernels olsr oracle babel rpl --mac > $(VENV)/kernels-others.log 2>&1 & others=$$!; \
	if [ "$$(id -u)" = 0 ] && ! command -v tshark >/dev/null; then \
	    echo "installing Debian's tshark"; \
	    echo "wireshark-common wireshark-common/install-setuid boolean false" \
	        | debconf-set-selections; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark \
	        || { kill $$aodv $$others; exit 1; }; fi; \
	echo "installing into $(VENV): the ns3 and sumo extras (ns-3 3.44, SUMO, for the cross-checks)"; \
	$(PY) -m pip install -q -e '.[test,ns3,sumo]' 2>&1 | $(QUIET_PIP) || { kill $$aodv $$others; exit 1; }; \
	wait $$aodv && wait $$others || { cat $(VENV)/kernels-*.log; exit 1; }
	@cat $(VENV)/kernels-*.log
	@touch $@

# Without -v: the run's summary and its report's path are the last lines.
run: setup
	$(VENV)/bin/testbed run experiments/specs/quickstart.toml --out runs --report

# Two workers per core: a third of the suite's time is spent waiting on JVMs and on
# Mininet's real time, which the second worker fills (on 2 cores, caches warm: 8 min 42 s
# with one worker per core and one Spark group, 6 min 49 s to 8 min 53 s over three
# sittings so; docs/NOTES.md "Two workers per core"). The Spark tests run in two groups,
# the cluster and the Mininet tests in one each, a worker per group (tests/conftest.py);
# the other tests fill the workers.
WORKERS := $(shell echo $$(( 2 * $$(nproc) )))
# The suite starts hundreds of Python processes (its workers, Spark's Python workers,
# Mininet's hosts, CLI and sweep runs): with PYTHONDONTWRITEBYTECODE set (as on some CI
# machines) each would compile the project's sources again, and pytest rewrite every
# test module's asserts in every worker. Bytecode is written for the tests' sake.
TEST_ENV := PYTHONDONTWRITEBYTECODE=
# `make test` leaves out the tests marked full_suite (the longest repetitions of what
# other tests already cover on Spark: the remaining operators of a contract suite, ...);
# `make test-full` runs those, and CI runs both.
test: setup $(NS3)
	$(TEST_ENV) $(PY) -m pytest -n $(WORKERS) --dist loadgroup -m "not full_suite" --durations=20

test-full: setup $(NS3)
	$(TEST_ENV) $(PY) -m pytest -n $(WORKERS) --dist loadgroup -m full_suite --durations=20

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) runs reports .pytest_cache
