# Bullpen developer commands. `make test` is the one test command (CI runs it).
GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run build test test-kubernetes lint generate bench screenshots vendor

## run: build bin/bullpen and its sandbox init, then start the server
run: build
	./bin/bullpen

## build: build bin/bullpen and bin/bullpen-sandbox-init (the sandboxes' PID 1, found next to bin/bullpen), static and without debug tables, printing progress and figure lines
build:
	GO=$(GO) bash scripts/build.sh

## test: install test tools, start PostgreSQL, check formatting and generated code, go test -race
test:
	bash scripts/test.sh

## test-kubernetes: the Kubernetes tests alone against a real one-node cluster (as root): builds kube-apiserver, kubelet & co. once per machine into ~/.cache/bullpen/kube (about 10 minutes cold), starts the cluster, runs the tests, stops it
test-kubernetes:
	bash scripts/kube/test.sh

## lint: go vet, gofmt check, staticcheck
lint:
	$(GO) vet ./...
	@files=$$(gofmt -l .); \
	if [ -n "$$files" ]; then echo "not gofmt-ed:"; echo "$$files"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

## generate: regenerate templ components (commit the *_templ.go output)
generate:
	$(GO) tool templ generate

## bench: build, run every benchmark three times and print one table of figures, targets and load (as root; about 25 minutes; BENCH_FLAGS=-quick for a short check)
bench:
	$(GO) run ./bench $(BENCH_FLAGS)

## screenshots: start a seeded demo office (real sandboxes: run as root) and write docs/screenshots/*.png at 1400x900, 1024x768 and 800x700 with headless Chromium
screenshots:
	@# the emoji in the demo's messages need a colour emoji font (headless Chromium draws boxes without one)
	@fc-list 2>/dev/null | grep -q NotoColorEmoji || [ "$$(id -u)" != 0 ] || \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-noto-color-emoji >/dev/null || \
		echo "screenshots: fonts-noto-color-emoji not installed: emoji will show as boxes" >&2
	BULLPEN_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestScreenshots$$' -v ./cmd/bullpen/

## vendor: fetch the pinned browser libraries (xterm.js) into static/vendor again
vendor:
	bash scripts/vendor.sh
