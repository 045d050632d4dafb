package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildTools compiles the bench commands the selected steps run (those
// under dir) once, so that no step's figure includes a compile.
func buildTools(ctx context.Context, dir string, selected []step) error {
	for _, s := range selected {
		if filepath.Dir(s.argv[0]) != dir {
			continue
		}
		t := filepath.Base(s.argv[0])
		cmd := exec.CommandContext(ctx, "go", "build", "-o", s.argv[0], "./bench/"+t)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", t, err)
		}
	}
	return nil
}

// fixtures are what the selected steps need: a PostgreSQL server, the
// agent CLIs and the Kubernetes test cluster. env goes to every step.
type fixtures struct {
	env     []string
	pgDir   string
	kubeDir string // the test cluster this bench started
}

func startFixtures(ctx context.Context, selected []step, log io.Writer) (*fixtures, error) {
	fx := &fixtures{}
	needs := map[string]bool{}
	for _, s := range selected {
		needs[s.needs] = true
	}
	if needs["crun"] {
		ensureCrun(ctx, log)
	}
	if needs["clis"] {
		cmd := exec.CommandContext(ctx, "bash", "scripts/clis.sh")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("agent CLIs (scripts/clis.sh): %w", err)
		}
	}
	if needs["postgres"] {
		if err := fx.postgres(ctx, log); err != nil {
			return nil, err
		}
	}
	if needs["kube"] {
		if err := fx.kube(ctx, log); err != nil {
			fx.stop()
			return nil, err
		}
	}
	return fx, nil
}

// kube uses the test cluster BULLPEN_TEST_KUBECONFIG names when set;
// otherwise it starts one with scripts/kube/cluster.sh up (as root; its
// binaries are built once per machine) and stop takes it down.
func (fx *fixtures) kube(ctx context.Context, log io.Writer) error {
	if os.Getenv("BULLPEN_TEST_KUBECONFIG") != "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "bash", "scripts/kube/cluster.sh", "up")
	cmd.Stderr = log
	out, err := cmd.Output()
	vars := exports(out)
	fx.kubeDir = vars["BULLPEN_KUBE_DIR"]
	if err != nil {
		return fmt.Errorf("the Kubernetes test cluster (scripts/kube/cluster.sh up): %w", err)
	}
	if vars["BULLPEN_TEST_KUBECONFIG"] == "" || fx.kubeDir == "" {
		return fmt.Errorf("the Kubernetes test cluster: scripts/kube/cluster.sh up printed no kubeconfig")
	}
	for _, k := range []string{"BULLPEN_TEST_KUBECONFIG", "BULLPEN_KUBE_DIR", "BULLPEN_TEST_KUBE_IMAGE", "BULLPEN_TEST_CONTAINERD"} {
		fx.env = append(fx.env, k+"="+vars[k])
	}
	return nil
}

// ensureCrun installs Debian's crun for the REST bench's OCI reference when
// it is missing. Without it (not root, no package) that reference is
// skipped and the bench says so; nothing else depends on it.
func ensureCrun(ctx context.Context, log io.Writer) {
	if _, err := exec.LookPath("crun"); err == nil || os.Geteuid() != 0 {
		return
	}
	fmt.Fprintln(log, "bench: installing crun (the REST bench's OCI runtime reference)")
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "-q", "--no-install-recommends", "crun")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(log, "bench: crun not installed:", err)
	}
}

// postgres uses BULLPEN_BENCH_POSTGRES_URL when set; otherwise it starts a
// throwaway cluster with PostgreSQL's durable defaults (fsync on), so the
// figures are those of a real deployment, not of the tests' fsync=off one.
// The Go benchmarks that also measure PostgreSQL get it as their test URL.
func (fx *fixtures) postgres(ctx context.Context, log io.Writer) error {
	if u := os.Getenv("BULLPEN_BENCH_POSTGRES_URL"); u != "" {
		fx.env = append(fx.env, "BULLPEN_TEST_POSTGRES_URL="+u)
		return nil
	}
	cmd := exec.CommandContext(ctx, "bash", "scripts/pg.sh", "start")
	cmd.Env = append(os.Environ(), "BULLPEN_PG_DURABLE=1")
	cmd.Stderr = log
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("PostgreSQL (scripts/pg.sh start): %w", err)
	}
	vars := exports(out)
	fx.pgDir = vars["BULLPEN_PG_DIR"]
	u := vars["BULLPEN_TEST_POSTGRES_URL"]
	if u == "" || fx.pgDir == "" {
		return fmt.Errorf("PostgreSQL: scripts/pg.sh printed no URL")
	}
	fx.env = append(fx.env, "BULLPEN_BENCH_POSTGRES_URL="+u, "BULLPEN_TEST_POSTGRES_URL="+u)
	return nil
}

func (fx *fixtures) stop() {
	if fx.pgDir != "" {
		exec.Command("bash", "scripts/pg.sh", "stop", fx.pgDir).Run()
	}
	if fx.kubeDir != "" {
		cmd := exec.Command("bash", "scripts/kube/cluster.sh", "down", fx.kubeDir)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stop the Kubernetes test cluster:", err)
		}
	}
}

// exports parses pg.sh's `export NAME=VALUE` lines (values %q-quoted by
// bash's printf, which for these paths and URLs means no quoting at all).
func exports(out []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "export ")
		if !ok {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = strings.ReplaceAll(strings.Trim(v, `'"`), `\`, "")
		}
	}
	return m
}

// memTotal is the host's memory from /proc/meminfo.
func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			var kb float64
			fmt.Sscan(f[1], &kb)
			return fmt.Sprintf("%.0f GiB", kb/(1<<20))
		}
	}
	return "memory unknown"
}
