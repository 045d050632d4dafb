// Package browsertest starts headless Chromium for tests. The test script
// installs Debian's chromium; without it a test skips, except under CI,
// where it fails so that browser coverage cannot silently vanish.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ExecPath finds Chromium: $BULLPEN_CHROMIUM, else chromium on PATH.
func ExecPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("BULLPEN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("no chromium in PATH (scripts/test.sh installs it)")
	}
	tb.Skip("no chromium in PATH; scripts/test.sh installs it")
	return ""
}

// Browser starts a headless browser and returns the context of its first
// tab, bounded by timeout. Further tabs: chromedp.NewContext(ctx).
func Browser(tb testing.TB, timeout time.Duration) context.Context {
	tb.Helper()
	if testing.Short() {
		tb.Skip("browser test skipped in -short mode")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ExecPath(tb)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800), chromedp.Flag("disable-component-update", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	tb.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}
