# prepl: `make demo` shows it working on a fresh machine, `make test` proves it.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN     := bin/prepl

.PHONY: all build man deps deps-server test test-race test-rest test-galera fuzz soak corpus demo analyze-accuracy bench bench-io bench-keepgtid bench-workers bench-tpcc tpcc-binlog bench-full bench-scale bench-pg bench-copy bench-docs clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/prepl

# man writes the man page from the commands' help.
man:
	$(GO) run -ldflags "-X main.version=$(VERSION)" ./cmd/prepl man > docs/prepl.1

# deps installs what a fresh Debian machine lacks: the MariaDB and
# PostgreSQL servers the tests and the demo start sandboxes of, the Galera
# provider and rsync (for its state transfers) of the cluster tests,
# MariaDB's test suite (the corpus), and sysbench for workloads.
deps: deps-server
	@command -v sysbench >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq sysbench; }

deps-server:
	@command -v mariadbd >/dev/null || test -x /usr/sbin/mariadbd || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq mariadb-server; }
	@ls /usr/share/mysql/mysql-test/mysql-test-run.pl >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq mariadb-test; }
	@test -e /usr/lib/galera/libgalera_smm.so || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq galera-4; }
	@command -v rsync >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq rsync; }
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq postgresql; }

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# The packages with goroutines of their own run under the race detector.
# -parallel 4: cmd/prepl's fault tests mostly wait (a 30 s stall, target
# restarts), and those marked t.Parallel overlap with each other.
# The two groups (the race packages, cmd/prepl's end-to-end tests the
# longest of them; and the rest, the differential scenarios the longest)
# run at the same time: each mostly waits on its servers, so on 2 cores
# together they take far less than one after the other. Each group's
# output is printed whole when it ends (--output-sync).
RACE_PKGS := ./apply/ ./binlog/... ./metrics/ ./progress/ ./run/ ./cmd/prepl/

test: deps
	@out=$$(gofmt -l .); test -z "$$out" || { echo "not gofmt'ed (run gofmt -w on them):"; echo "$$out"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags galera ./run/
	$(GO) build ./...
	$(MAKE) --no-print-directory -j2 --output-sync=target test-race test-rest
	$(MAKE) --no-print-directory fuzz FUZZTIME=5000x

test-race:
	$(GO) test -count=1 -timeout 25m -parallel 4 -race $(RACE_PKGS)

test-rest:
	$(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -vE '/(apply|binlog|binlog/stream|binlog/fileset|metrics|progress|run|cmd/prepl)$$')

# test-galera (not part of test) runs every Galera cluster test, those of
# run/galera_all_test.go (build tag galera) too, with issue 34's 10 kills
# of the node prepl writes to (make test runs only the kill test, with
# 2): about 4 minutes on a quiet 2-core machine (docs/galera.md).
test-galera: deps
	PREPL_GALERA_KILLS=10 $(GO) test -tags galera -count=1 -timeout 30m -run 'TestGalera' -v ./run/

# fuzz runs every fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m).
# make test gives each a count of runs (5000x), not a time: with a time,
# go1.26's coordinator can report its own deadline as a failure
# ("context deadline exceeded", no input written: go.dev/issue/75804,
# fixed in Go 1.27), which failed a CI run on a loaded machine.
# A failing input is written to the package's testdata/fuzz/FuzzX/: commit
# it with the fix, and it stays a regression test of plain `go test`.
# Minimizing an input is capped at 100 runs: the binlog inputs are a few
# KiB, and the default (60 s per new input) would leave no time to fuzz.
FUZZTIME ?= 1m
FUZZ_TARGETS := binlog:FuzzReadFile binlog:FuzzReadFileFixedCRC binlog:FuzzDecodeValue \
	binlog:FuzzDecodeRowsFast binlog:FuzzDecodeEvents \
	filter:FuzzDDL internal/sqllex:FuzzTokens mysql:FuzzParseURL cmd/prepl:FuzzConfig
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "fuzz $$fn (./$$pkg) for $(FUZZTIME)"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x ./$$pkg/ 2>&1) \
			|| { echo "$$out"; exit 1; }; echo "$$out" | tail -n 2; \
	done

# soak (not part of test): SOAK_TIME (default 30m) of prepl replicate from a
# source under steady sysbench load, through fault proxies, with faults at
# random: source connections cut, stalled, refused, a corrupt byte, the
# target killed and restarted, prepl SIGKILLed and restarted. Prints RSS
# max, lag max, the faults and the result; writes them to SOAK_OUT
# (default soak-out/soak.md). See docs/reliability.md.
SOAK_TIME ?= 30m
SOAK_RATE ?= 200
soak: deps
	SOAK_TIME=$(SOAK_TIME) SOAK_RATE=$(SOAK_RATE) SOAK_OUT=$(CURDIR)/soak-out/soak.md \
		$(GO) test -tags soak -count=1 -v -timeout 0 -run '^TestSoak$$' ./cmd/prepl/

# corpus (not part of test): MariaDB's own test suite through prepl
# (docs/corpus.md): each test of testdata/corpus/tests.txt (less
# exclusions.txt) runs under mtr with a ROW binlog, once per row image of
# CORPUS_IMAGES, and its binlog is applied by mariadb-binlog | mariadb and
# by prepl replay (serial, writeset, optimistic; compaction on and off),
# the targets compared at every checkpoint. One line per stop or
# difference, the summary last; the report goes to corpus-out/report.txt.
# CORPUS_ARGS adds flags, e.g. --only '^json\.' or --jobs 3.
CORPUS_IMAGES ?= FULL,MINIMAL,NOBLOB
corpus: deps build
	nice $(GO) run ./corpus/cmd --prepl $(BIN) --images $(CORPUS_IMAGES) --report corpus-out/report.txt $(CORPUS_ARGS)

# analyze-accuracy (not part of test): prepl analyze's predictions against
# measured prepl replay times, the table of docs/analyze.md's "Predicted
# against measured" (about 10 minutes on a quiet 2-core machine): for each
# of ACCURACY_WORKLOADS, prepl bench times replay with 0, 4 and 16
# workers on config B, ACCURACY_REPEATS times, then prepl analyze
# --calibrate predicts the same binlog as many times. The table goes to
# ACCURACY_OUT/accuracy.md and the output.
ACCURACY_OUT ?= bench-out/accuracy
ACCURACY_REPEATS ?= 3
ACCURACY_WORKLOADS ?= oltp,update-index,update-index-serial,write-only,insert
analyze-accuracy: deps
	ACCURACY_OUT=$(abspath $(ACCURACY_OUT)) ACCURACY_REPEATS=$(ACCURACY_REPEATS) ACCURACY_WORKLOADS=$(ACCURACY_WORKLOADS) \
		$(GO) test -tags accuracy -count=1 -v -timeout 0 -run '^TestAnalyzeAccuracy$$' ./cmd/prepl/

# demo: a small benchmark, side by side with MariaDB's own parallel replica
# (about half a minute): a sandbox source runs sysbench oltp_read_write,
# then MariaDB's replica and prepl catch up with it from the same snapshot,
# each checked against the source by checksums.
demo: deps build
	$(BIN) bench --workloads oltp --rows 20000 --events 10000 --threads 0,4,16 --configs B \
		--systems mariadb,prepl-replicate --mariadb-modes conservative,optimistic --prepl-modes writeset \
		--repeats 1 --out demo-out
	@echo; sed -n '/^#### /,/^CPU per/p' demo-out/results.md

# bench is the quick catch-up benchmark (about 70 minutes on a quiet 2-core
# machine for the first four parts; the tpcc part's 75 runs take longer:
# 34 runs, configs C and A only, took 75 minutes on a busy machine), in
# five runs, each into its own directory:
# - bench-out/quick: all three workloads on configs A, B and C, 7 repeats
#   (medians of 7 for the comparisons of 5% that "workers never hurt" asks
#   for; single runs on 2 shared cores scatter by 20-40% either way),
#   threads 0, 4 and 16 only, MariaDB's conservative and optimistic modes
#   (not aggressive), prepl replicate and replay in writeset mode only,
#   20,000 transactions per binlog;
# - bench-out/io: config D (I/O-bound: 32 MiB buffer pool, O_DIRECT, cold)
#   on update-index over 4 tables of 300,000 rows (about 8.6x the pool),
#   uniform keys, 5,000 transactions;
# - bench-out/keepgtid: prepl --keep-gtid beside MariaDB's replica on
#   update-index, configs A, B and C, 5,000 transactions, threads 0 and 16;
# - bench-out/workers: "workers never hurt" on its own, prepl only, the
#   quick part's workloads, configs and thread counts on binlogs five times
#   longer (100,000 transactions): a run of 20,000 lasts under a second
#   here, and such runs scatter by 20-40%, too much to tell 1.05 from 1.0;
# - bench-out/tpcc: the TPC-C-like workload (bench/lua/tpcc.lua: foreign
#   keys, hot district and warehouse rows, wide rows, a key-less history
#   table; 2 warehouses, 16 source threads, 20,000 transactions) beside
#   MariaDB's replica on configs A, B and C, 3 repeats.
# bench-full is the whole matrix of tracker issue 4 (hours).
BENCH_QUICK := --workloads oltp,update-index,update-index-serial --rows 100000 --events 20000 \
	--threads 0,4,16 --configs A,B,C --systems mariadb,prepl-replicate,prepl-replay \
	--mariadb-modes conservative,optimistic --prepl-modes writeset --repeats 7
BENCH_IO := --workloads update-index --tables 4 --rows 300000 --rand-type uniform --events 5000 \
	--threads 0,4,16 --configs D --systems mariadb,prepl-replicate \
	--mariadb-modes conservative,optimistic --prepl-modes writeset --repeats 3 --limit-args ""
BENCH_KEEPGTID := --workloads update-index --rows 100000 --events 5000 \
	--threads 0,16 --configs A,B,C --systems mariadb,prepl-keep-gtid \
	--mariadb-modes conservative,optimistic --prepl-modes writeset --repeats 3 --limit-args ""

BENCH_WORKERS := --workloads oltp,update-index,update-index-serial --rows 100000 --events 100000 \
	--threads 0,4,16 --configs A,B,C --systems prepl-replicate,prepl-replay \
	--prepl-modes writeset --repeats 5 --limit-args ""
BENCH_TPCC := --workloads tpcc --events 20000 --source-threads 16 \
	--threads 0,4,16 --configs A,B,C --systems mariadb,prepl-replicate \
	--mariadb-modes conservative,optimistic --prepl-modes writeset --repeats 3
bench: deps build
	$(BIN) bench $(BENCH_QUICK) --out bench-out/quick $(BENCH_ARGS)
	$(BIN) bench $(BENCH_IO) --out bench-out/io $(BENCH_ARGS)
	$(BIN) bench $(BENCH_KEEPGTID) --out bench-out/keepgtid $(BENCH_ARGS)
	$(BIN) bench $(BENCH_WORKERS) --out bench-out/workers $(BENCH_ARGS)
	$(BIN) bench $(BENCH_TPCC) --out bench-out/tpcc $(BENCH_ARGS)

# bench-io, bench-keepgtid and bench-workers are the second, third and
# fourth parts of bench alone.
bench-io: deps build
	$(BIN) bench $(BENCH_IO) --out bench-out/io $(BENCH_ARGS)

bench-keepgtid: deps build
	$(BIN) bench $(BENCH_KEEPGTID) --out bench-out/keepgtid $(BENCH_ARGS)

bench-workers: deps build
	$(BIN) bench $(BENCH_WORKERS) --out bench-out/workers $(BENCH_ARGS)

bench-tpcc: deps build
	$(BIN) bench $(BENCH_TPCC) --out bench-out/tpcc $(BENCH_ARGS)

# tpcc-binlog writes a TPC-C-like binlog for profiling prepl replay and
# prepl analyze (about 5 minutes): the binlog files and their start GTID go
# to TPCC_BINLOG/tpcc/; one prepl replay --workers 0 run on config C times
# it (its log, with prepl's summary, is under TPCC_BINLOG/bench/logs/);
# the source and the snapshot before the workload stay on disk, their
# paths printed (docs/benchmarks.md, "TPC-C-like workload").
TPCC_BINLOG ?= bench-out/tpcc-binlog
tpcc-binlog: deps build
	$(BIN) bench --workloads tpcc --events 20000 --source-threads 16 --threads 0 --configs C \
		--systems prepl-replay --repeats 1 --limit-args "" --keep \
		--save-binlog $(TPCC_BINLOG) --out $(TPCC_BINLOG)/bench $(BENCH_ARGS)

bench-full: deps build
	$(BIN) bench --out bench-out/full $(BENCH_ARGS)

# bench-scale (not part of test or bench): prepl at scale, into
# bench-out/scale/: a SCALE_VOLUME binlog (default 10GiB: needs that much
# free disk and about half an hour) replayed with RSS and throughput
# sampled, one SCALE_BIG_TXN transaction (default 1GiB, a single UPDATE of
# about 4 million rows), and --workers up to 256. See docs/benchmarks.md.
SCALE_VOLUME  ?= 10GiB
SCALE_BIG_TXN ?= 1GiB
bench-scale: deps build
	$(BIN) bench scale --volume $(SCALE_VOLUME) --big-txn $(SCALE_BIG_TXN) --out bench-out/scale $(BENCH_ARGS)

# bench-pg (not part of test): prepl beside pgloader (Debian's, installed
# here; a copy only) and pg_chameleon (copy and catch-up) moving a MariaDB
# database into PostgreSQL, timed on the same data and binlog
# (docs/benchmarks.md; 15 to 25 minutes here). pg_chameleon is on no
# registry this machine reaches: it runs from git mirrors of its
# repository and of python-mysql-replication and parsy under PREPL_MIRROR
# (default /work/.mirror), with Debian's Python modules for the rest, and
# is left out, with a note in the results, where they are missing.
BENCH_PG_PY := python3-pymysql python3-psycopg2 python3-yaml python3-tabulate python3-daemonize \
	python3-packaging python3-pkg-resources

bench-pg: deps build
	@command -v pgloader >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq pgloader; }
	@/usr/bin/python3 -c 'import pymysql, psycopg2, yaml, tabulate, daemonize, packaging, pkg_resources' 2>/dev/null || \
		{ $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(BENCH_PG_PY); }
	$(GO) run ./bench/pgmigrate/cmd --prepl $(BIN) --out bench-out/pg $(BENCH_PG_ARGS)

# bench-copy (not part of test or bench): prepl copy beside mydumper +
# myloader (Debian's mydumper package, installed here), MariaDB to MariaDB:
# 8 sysbench tables of 100,000 rows, 4 threads each, into fresh targets
# with innodb_flush_log_at_trx_commit=1, BENCH_COPY_REPEATS repeats, every
# target checksummed against the source (docs/benchmarks.md, "prepl copy
# beside mydumper + myloader"; about 5 minutes here).
BENCH_COPY_REPEATS ?= 5
bench-copy: deps build
	@command -v mydumper >/dev/null && command -v myloader >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq mydumper; }
	$(GO) run ./bench/mycopy/cmd --prepl $(BIN) --repeats $(BENCH_COPY_REPEATS) --out bench-out/copy $(BENCH_COPY_ARGS)

# bench-pg-identity (not part of test): the catch-up of single-row inserts
# into PostgreSQL by this build against PEER (default: the commit before
# replicated ids moved the identity sequence), median of BENCH_ROUNDS
# alternating rounds (docs/postgres.md).
PEER         ?= e78e373
BENCH_ROUNDS ?= 5
bench-pg-identity: deps
	rm -rf bench-out/peer-src && mkdir -p bench-out/peer-src && git archive $(PEER) | tar -x -C bench-out/peer-src
	cd bench-out/peer-src && $(GO) build -o ../prepl-peer ./cmd/prepl
	PREPL_PEER=$(CURDIR)/bench-out/prepl-peer $(GO) test ./cmd/prepl -run '^$$' -bench PostgresIdentityAdvance \
		-benchtime $(BENCH_ROUNDS)x -timeout 60m

# bench-docs puts the last `make bench` into docs/benchmarks.md: each
# part's results.md between its markers, its charts in docs/img/. Review
# the prose around them: it discusses the numbers of the run it was
# written for. A part not run (no results.md) is left as it is. The io,
# keepgtid and workers charts are copied as PART-NAME.png.
bench-docs:
	@for part in quick io keepgtid workers tpcc scale; do \
		f=bench-out/$$part/results.md; test -f $$f || { echo "bench-docs: no $$f, $$part left as it is"; continue; }; \
		prefix=$$part-; case $$part in quick|scale) prefix=;; esac; \
		for png in bench-out/$$part/*.png; do test -f $$png && cp $$png docs/img/$$prefix$$(basename $$png); done; \
		awk -v part=$$part 'FNR == NR { r = r $$0 "\n"; next } \
		     $$0 ~ "^<!-- " part " results.md begins" { print; printf "%s", r; skip = 1; next } \
		     $$0 ~ "^<!-- " part " results.md ends" { skip = 0 } !skip' $$f docs/benchmarks.md > docs/benchmarks.md.new \
		&& mv docs/benchmarks.md.new docs/benchmarks.md; \
	done

clean:
	rm -rf bin demo-out
