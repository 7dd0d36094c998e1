// Package browser tests kcache's debug page in a real headless Chromium: it starts the example
// controller with -debug-addr, loads the page over the DevTools protocol, checks what a user
// sees and saves a screenshot. It is a module of its own so that the kcache module never
// depends on chromedp; it is not published.
//
//	cd test/browser && go test -v .
//
// The browser is CHROMIUM if set, else the first of chromium, chromium-browser,
// google-chrome and headless-shell on PATH; without one the test says so and skips. The
// screenshot goes to ARTIFACTS_DIR if set, else to artifacts/ next to this file; its path is in
// the test output.
package browser

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// findBrowser returns the Chromium to drive, or "" if there is none.
func findBrowser() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

var servingLine = regexp.MustCompile(`serving the debug page at (http://\S+) until interrupted`)

// startExample builds and starts examples/controller with -debug-addr on a free loopback port
// and returns the page's URL once the example has printed its summary and serves the page
// with the controller still running. The example is interrupted at the end of the test.
func startExample(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/controller")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "-debug-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	found := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		<-readDone
		if err := cmd.Wait(); err != nil {
			t.Errorf("the example did not exit cleanly on SIGINT: %v\n%s", err, log.String())
		}
	})
	select {
	case url := <-found:
		return url
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-readDone
		t.Fatalf("the example did not serve its debug page: %v\n%s", ctx.Err(), log.String())
		return ""
	}
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = "artifacts"
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDebugPageInBrowser loads the example's debug page in headless Chromium and checks that
// the informer, its handler and the workqueue are listed, the informer as synced, and that
// the key view is one link away.
func TestDebugPageInBrowser(t *testing.T) {
	browser := findBrowser()
	if browser == "" {
		t.Skip("no Chromium found (install Debian's chromium package, or set CHROMIUM): skipping the browser test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := startExample(ctx, t)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 1000),
	)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	if err := chromedp.Do(browserCtx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`tr.informer`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.handler`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.queue`)),
	); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	text := func(css string) string {
		t.Helper()
		s, err := chromedp.Run(browserCtx, chromedp.Text(chromedp.CSS(css)))
		if err != nil {
			t.Fatalf("reading %s: %v", css, err)
		}
		return s
	}
	informers, state := text(`tr.informer`), text(`tr.informer td.state`)
	handlers, queues := text(`tr.handler`), text(`tr.queue`)
	screenshot, err := chromedp.Run(browserCtx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("taking a screenshot: %v", err)
	}
	t.Logf("informer row: %q", informers)
	t.Logf("handler row:  %q", handlers)
	t.Logf("queue row:    %q", queues)
	if strings.TrimSpace(state) != "synced" {
		t.Errorf("the informer's state reads %q, want synced", state)
	}
	if !strings.Contains(informers, "Widget") {
		t.Errorf("the informer row does not name the Widget informer: %q", informers)
	}
	if !strings.Contains(handlers, "synced") {
		t.Errorf("the handler row does not show a synced handler: %q", handlers)
	}
	if !strings.Contains(queues, "widgets") {
		t.Errorf("the queue row does not name the widgets queue: %q", queues)
	}

	path := filepath.Join(artifactsDir(t), "debugpage.png")
	if err := os.WriteFile(path, screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the debug page: %s", path)
	fmt.Printf("screenshot of the debug page: %s\n", path)

	// The key view, reached the way a user reaches it: by following the link.
	if err := chromedp.Do(browserCtx,
		chromedp.Click(chromedp.CSS(`tr.informer a[href^="keys?"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.key`)),
	); err != nil {
		t.Fatalf("opening the key view: %v", err)
	}
	keys, err := chromedp.Run(browserCtx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("tr.key td:first-child")).map(td => td.textContent)`))
	if err != nil {
		t.Fatalf("reading the key view: %v", err)
	}
	if len(keys) != 11 || !strings.HasPrefix(keys[0], "team-a/") {
		t.Errorf("the key view lists %v, want the 11 widgets, sorted", keys)
	}
}
