# sqlfw: `make demo` shows it working, `make test` runs every test against
# throwaway servers the scripts start and stop.

# VERSION is the Debian version of the tree (scripts/deb-version.sh): 0.1.0
# at the tag v0.1.0, 0.1.0+3.gabc1234 three commits past it. The binaries
# are stripped (-s -w) and built with -trimpath; `make build STRIP=` keeps
# the symbol table and DWARF for a debugger (docs/operations.md).
VERSION ?= $(shell bash scripts/deb-version.sh 2>/dev/null || echo dev)
GO      ?= go
PREFIX  ?= /usr/local
STRIP   ?= -s -w
LDFLAGS := $(STRIP) -X main.version=$(VERSION)

.PHONY: all build test test-matrix demo fmt lint generate bench install uninstall deb image clean deps sqlmap corpora booted

all: build

build:
	@mkdir -p bin
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...
	bin/fwctl completion bash > bin/fwctl.bash-completion
	$(GO) run ./internal/mangen -bin bin -out bin/man

test:
	bash scripts/test.sh

# test-matrix runs the PostgreSQL version matrix's e2e set against 14, 15,
# 16, 17 and 18 (scripts/pg-matrix.sh; docs/testing.md), e.g.
# MATRIX_ARGS='--versions "14 18"'.
test-matrix:
	bash scripts/pg-matrix.sh $(MATRIX_ARGS)

demo:
	bash scripts/demo.sh

deps:
	bash scripts/deps.sh

# sqlmap runs sqlmap against the injectable test application directly,
# through sqlfwd with the default policy and with a learned allowlist, and
# writes docs/sqlmap-results.md (docs/sqlmap.md). SQLMAP_ARGS narrows it,
# e.g. SQLMAP_ARGS='--targets pg --endpoints item'.
sqlmap:
	bash scripts/deps.sh
	bash scripts/sqlmap.sh $(SQLMAP_ARGS)

# corpora places public SQL-injection corpora (Debian's sqlmap and wfuzz
# lists; checkouts of libinjection, the OWASP CRS and PayloadsAllTheThings
# when CORPORA_ARGS names them) in the statements a vulnerable application
# builds, judges them with the default policies and writes
# docs/corpora-results.md (docs/corpora.md), e.g.
# CORPORA_ARGS='--libinjection ../libinjection --crs ../coreruleset --patt ../PayloadsAllTheThings'.
corpora:
	bash scripts/corpora.sh $(CORPORA_ARGS)

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

# install puts in place the binaries, the systemd units (pointing at
# $(PREFIX)/bin), the sysusers entry for the sqlfw user, the default
# policies and an example configuration in $(SHAREDIR). It writes no
# /etc/sqlfw/sqlfwd.yaml: without one sqlfwd protects the PostgreSQL servers
# it finds (zero configuration). DESTDIR stages into a scratch root;
# uninstall removes what install put and leaves /etc/sqlfw alone.
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SHAREDIR   ?= $(PREFIX)/share/sqlfw
SYSCONFDIR ?= /etc

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SHAREDIR)/policy $(DESTDIR)$(SYSCONFDIR)/sqlfw
	install -m 0755 bin/sqlfwd bin/fwctl $(DESTDIR)$(PREFIX)/bin/
	for u in sqlfwd.service sqlfwd-listener.service; do \
		sed 's|/usr/bin/sqlfwd|$(PREFIX)/bin/sqlfwd|' deploy/$$u > $(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; done
	install -m 0644 deploy/sqlfw.sysusers $(DESTDIR)$(SYSUSERSDIR)/sqlfw.conf
	install -m 0644 engine/pgsql/default_policy.yaml $(DESTDIR)$(SHAREDIR)/policy/postgres.yaml
	install -m 0644 engine/mysql/default_policy.yaml $(DESTDIR)$(SHAREDIR)/policy/mysql.yaml
	install -m 0644 deploy/sqlfwd.yaml $(DESTDIR)$(SHAREDIR)/sqlfwd.yaml.example
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 bin/fwctl.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fwctl
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0644 bin/man/fwctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 bin/man/sqlfwd.yaml.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 bin/man/sqlfwd.8 $(DESTDIR)$(PREFIX)/share/man/man8/

# deb builds dist/sqlfw_VERSION_ARCH.deb with nfpm (fetched through the Go
# module proxy on first use); scripts/deb-version.sh gives the version, the
# same one the binaries print. The changelog is deploy/debian/changelog
# (with a snapshot entry past a tag); the man pages come from --help.
NFPM      ?= go run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
DEBVERSION ?= $(VERSION)

deb: build
	@mkdir -p dist
	bash scripts/deb-changelog.sh '$(DEBVERSION)' bin/changelog.Debian.gz
	for m in bin/man/*.[0-9]; do gzip -9n -c $$m > $$m.gz; done
	SQLFW_VERSION='$(DEBVERSION)' GOARCH=$$($(GO) env GOARCH) $(NFPM) package --packager deb --config deploy/nfpm.yaml --target dist/

# image builds the container image deploy/kubernetes/daemonset.yaml names:
# $(IMAGE):$(IMAGE_TAG), the package version with "+" written "-" (a tag
# cannot hold "+"). CONTAINER=podman works as well.
CONTAINER ?= docker
IMAGE     ?= ghcr.io/sqlfw/sqlfwd
IMAGE_TAG ?= $(subst +,-,$(VERSION))

image:
	$(CONTAINER) build -f deploy/container/Containerfile --build-arg VERSION='$(VERSION)' -t $(IMAGE):$(IMAGE_TAG) .

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sqlfwd $(DESTDIR)$(PREFIX)/bin/fwctl
	rm -f $(DESTDIR)$(UNITDIR)/sqlfwd.service $(DESTDIR)$(UNITDIR)/sqlfwd-listener.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/sqlfw.conf
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fwctl
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/fwctl.1 $(DESTDIR)$(PREFIX)/share/man/man5/sqlfwd.yaml.5 $(DESTDIR)$(PREFIX)/share/man/man8/sqlfwd.8
	rm -rf $(DESTDIR)$(SHAREDIR)
	@echo "uninstall: left $(DESTDIR)$(SYSCONFDIR)/sqlfw alone (your configuration)"

clean:
	rm -rf bin dist

# booted installs the Debian package on a booted Debian bookworm (systemd-
# nspawn, scripts/nspawn.sh; the root is cached in /var/cache/sqlfw-test)
# with PostgreSQL and MariaDB started by their units, and checks blocking on
# every local path, reload, upgrade and removal (TestDebBooted; root;
# docs/testing.md).
booted:
	bash scripts/nspawn.sh image
	SQLFW_BOOTED=1 bash scripts/test.sh -run 'TestDebBooted' ./e2e; rc=$$?; bash scripts/nspawn.sh reap; exit $$rc
