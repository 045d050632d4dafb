package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// mountLines counts the lines of the host's mount table (this goroutine's
// thread is in the host's mount namespace: only the Manager's own locked
// threads are in its namespace), and those that are the bench's: a mount
// point in one of its state dirs or their run dirs. Other processes on a
// shared host mount and unmount meanwhile; the bench's lines are its
// figure.
func (h *hostCheck) mountLines() (total, own int) {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return -1, -1
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		total++
		if f := strings.Fields(line); len(f) > 4 {
			for _, r := range h.roots {
				if strings.HasPrefix(f[4], r) {
					own++
					break
				}
			}
		}
	}
	return total, own
}

// watch adds a Manager's state dir and its run dir (RunDir/<first 6
// bytes of sha256(StateDir)>, the Manager's naming, with its siblings
// .mnt, .ns, ...) to the bench's mounts.
func (h *hostCheck) watch(stateDir string) {
	sum := sha256.Sum256([]byte(stateDir))
	h.roots = append(h.roots, stateDir+"/", "/run/bullpen-sandbox/"+hex.EncodeToString(sum[:6]))
}

// bwrapP50 is the median of n bwrap runs (0 without bwrap).
func bwrapP50(bw *bwrapper, n int) time.Duration {
	if bw == nil {
		return 0
	}
	var ds []time.Duration
	for range n {
		if d, err := bw.once(); err == nil {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return 0
	}
	return median(ds)
}

// hostCheck is what the alive test measures of the sandboxes' cost to the
// rest of the host: the host's mount table and bwrap's start, before,
// with the sandboxes (half of them stopped, as idle agents' are) and
// after them; bwrap with them is compared with the mean of before and
// after, which brackets it in time on a host whose load drifts. A block of
// bwrap runs takes a third of a second, so the host's noise moves one
// ratio by more than the effect measured: the bench repeats the cycle
// (create, stop half, bwrap, terminate, bwrap) bwrapCycles times and
// reports the median ratio, each cycle's "after" the next one's "before".
type hostCheck struct {
	lines0   int // before the bench's Managers
	roots    []string
	bw       *bwrapper
	n        int
	bwBefore time.Duration
	bwWith   time.Duration
	ratios   []float64
}

const bwrapCycles = 3

// report stops every other sandbox of ids and prints the host mount lines
// added; it measures bwrap's start with them.
func (h *hostCheck) report(ctx context.Context, m *sandbox.Manager, ids []string) error {
	if err := stopHalf(ctx, m, ids); err != nil {
		return err
	}
	total, own := h.mountLines()
	fmt.Printf("  host mount table: %d lines with %d sandboxes (half stopped), %d before the bench (other processes' included); the bench's Managers': %d\n",
		total, len(ids), h.lines0, own)
	fmt.Printf("figure library_host_mount_lines_added %d lines\n", own)
	h.bwWith = bwrapP50(h.bw, h.n)
	return nil
}

func stopHalf(ctx context.Context, m *sandbox.Manager, ids []string) error {
	for i, id := range ids {
		if i%2 == 1 {
			if err := m.Stop(ctx, id); err != nil {
				return fmt.Errorf("stop %s: %w", id, err)
			}
		}
	}
	return nil
}

// reportAfter ends a cycle once its sandboxes are terminated: bwrap's
// start with them over without them. The first cycle is the alive test's;
// it then runs the others and prints the figure.
func (h *hostCheck) reportAfter(ctx context.Context, m *sandbox.Manager, count int) error {
	if h.bw == nil {
		return nil
	}
	h.cycleEnd()
	for len(h.ratios) < bwrapCycles {
		var ids []string
		for range count {
			in, err := m.Create(ctx, sandbox.Spec{})
			if err != nil {
				return fmt.Errorf("bwrap cycle: %w", err)
			}
			ids = append(ids, in.ID)
		}
		if err := stopHalf(ctx, m, ids); err != nil {
			return err
		}
		h.bwWith = bwrapP50(h.bw, h.n)
		for _, id := range ids {
			m.Terminate(ctx, id)
		}
		h.cycleEnd()
	}
	sort.Float64s(h.ratios)
	fmt.Printf("figure library_bwrap_with_sandboxes_ratio %.2f x\n", h.ratios[len(h.ratios)/2])
	return nil
}

// cycleEnd measures "after", prints the cycle and makes "after" the next
// cycle's "before".
func (h *hostCheck) cycleEnd() {
	after := bwrapP50(h.bw, h.n)
	if after == 0 || h.bwBefore == 0 || h.bwWith == 0 {
		h.ratios = append(h.ratios, 0)
		return
	}
	r := float64(h.bwWith) / (float64(h.bwBefore+after) / 2)
	h.ratios = append(h.ratios, r)
	fmt.Printf("  bwrap start p50, cycle %d of %d: %s before the sandboxes, %s with them, %s after them: %.2fx\n",
		len(h.ratios), bwrapCycles, fmtDur(h.bwBefore), fmtDur(h.bwWith), fmtDur(after), r)
	h.bwBefore = after
}
