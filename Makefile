# prepl: `make demo` shows it working on a fresh machine, `make test` proves it.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN     := bin/prepl

.PHONY: all build deps deps-server test demo clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/prepl

# deps installs what a fresh Debian machine lacks: the MariaDB server the
# tests and the demo start sandboxes of, and sysbench for workloads.
deps: deps-server
	@command -v sysbench >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq sysbench; }

deps-server:
	@command -v mariadbd >/dev/null || test -x /usr/sbin/mariadbd || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq mariadb-server; }

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

test: deps-server
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...

demo: deps build
	$(GO) run ./cmd/prepl-demo --prepl $(BIN)

clean:
	rm -rf bin demo-out
