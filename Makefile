# sqlfw: `make demo` shows it working, `make test` runs every test against
# throwaway servers the scripts start and stop.

VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO      ?= go
PREFIX  ?= /usr/local
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build test demo fmt lint generate bench install clean deps

all: build

build:
	@mkdir -p bin
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

deps:
	bash scripts/deps.sh

# fmt rewrites; CI-style checking is `gofmt -l .` printing nothing.
fmt:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt rewrote:"; echo "$$out"; gofmt -w .; fi

lint:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "not gofmt'd:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

generate:
	$(GO) generate ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 bin/sqlfwd bin/fwctl $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf bin
