# The two set-up commands of the README:
#   make demo   install what is needed, then run the example trial (rehearsal: scripted model, real claude, real tmux)
#   make test   install what is needed, then run the whole test suite with the end-to-end tests required
.PHONY: setup setup-test demo test test-oldest unit bench clean-sessions

# Test processes: the e2e tests mostly wait on the real CLI, so four fit two cores (README "Tests").
TEST_WORKERS ?= 4

setup:
	@bash scripts/setup.sh

# The tests also open a trial's report.html in Debian's headless Chromium (installed here when we are root).
setup-test:
	@bash scripts/setup.sh --browser

# The demo's trial works in its own new empty folder, <workdir>/cwd (the default): the example skill writes
# greeting.txt there, and the trial copies it into its workdir (side-effects/files/) for the evaluator.
demo: setup
	@.venv/bin/python -m live_trial run hello:greet --plugins-root examples/plugins \
	    --rehearsal examples/scenarios/greet-happy.yaml --args World

test: setup-test
	LIVE_TRIAL_REQUIRE_E2E=1 .venv/bin/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# The version matrix's second leg (README "Tests"): the e2e tests on the oldest supported CLI, ./claude-pin/oldest.
test-oldest: setup-test
	LIVE_TRIAL_REQUIRE_E2E=1 LIVE_TRIAL_CLAUDE_BIN=$(CURDIR)/claude-pin/oldest/node_modules/.bin/claude \
	    .venv/bin/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal tests/e2e

unit: setup
	.venv/bin/python -m pytest -q -n $(TEST_WORKERS) tests/unit

# benchmarks/huge.py writes about 2.6 GB in a temporary folder and deletes it at the end. Every benchmark runs even
# when an earlier one fails (all ratios get printed); the target fails at the end, naming those that missed a goal or
# could not run (tmux missing: boot.py exits 3).
BENCHMARKS = boot status plan huge latency folder parallel report proxy activation
bench: setup
	@missed=""; for b in $(BENCHMARKS); do \
		echo "== benchmarks/$$b.py"; .venv/bin/python benchmarks/$$b.py || missed="$$missed $$b"; \
	done; \
	if [ -n "$$missed" ]; then echo "BENCH missed a goal or could not run:$$missed"; exit 1; fi; echo "BENCH every goal met"

clean-sessions:
	.venv/bin/python -m live_trial reap
