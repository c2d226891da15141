# sqlfw: `make demo` shows it working, `make test` runs every test against
# throwaway servers the scripts start and stop.

VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO      ?= go
PREFIX  ?= /usr/local
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build test demo fmt lint generate bench install uninstall deb clean deps sqlmap corpora booted

all: build

build:
	@mkdir -p bin
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...
	bin/fwctl completion bash > bin/fwctl.bash-completion

test:
	bash scripts/test.sh

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
	install -m 0644 deploy/sqlfwd.yaml $(DESTDIR)$(SHAREDIR)/sqlfwd.yaml.example
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 bin/fwctl.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fwctl

# deb builds dist/sqlfw_VERSION_ARCH.deb with nfpm (fetched through the Go
# module proxy on first use); scripts/deb-version.sh gives the version.
NFPM      ?= go run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
DEBVERSION ?= $(shell bash scripts/deb-version.sh)

deb: build
	@mkdir -p dist
	SQLFW_VERSION='$(DEBVERSION)' GOARCH=$$($(GO) env GOARCH) $(NFPM) package --packager deb --config deploy/nfpm.yaml --target dist/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sqlfwd $(DESTDIR)$(PREFIX)/bin/fwctl
	rm -f $(DESTDIR)$(UNITDIR)/sqlfwd.service $(DESTDIR)$(UNITDIR)/sqlfwd-listener.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/sqlfw.conf
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fwctl
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
	SQLFW_BOOTED=1 bash scripts/test.sh -run 'TestDebBooted' ./e2e
