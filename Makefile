# Two targets do all the set-up on a fresh machine: `make run` and `make test`.
VENV   := .venv
PY     := $(CURDIR)/$(VENV)/bin/python
STAMP  := $(VENV)/.installed
export PYSPARK_PYTHON        := $(PY)
export PYSPARK_DRIVER_PYTHON := $(PY)

.PHONY: run test setup bench clean

setup: $(STAMP)

# Mininet comes from Debian and lives in the system Python, hence --system-site-packages.
$(STAMP): setup.cfg pyproject.toml
	@if [ "$$(id -u)" = 0 ] && ! /usr/bin/python3 -c 'import mininet.net' 2>/dev/null; then \
	    echo "installing Debian's mininet"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mininet; fi
	@test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

run: setup
	$(VENV)/bin/testbed -v run experiments/specs/quickstart.toml --out runs --report

# One worker per core; the Spark, cluster and Mininet tests run as one group each, in
# one worker per group (see tests/conftest.py); the other tests fill the workers.
test: setup
	$(PY) -m pytest -n auto --dist loadgroup

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) runs reports .pytest_cache
