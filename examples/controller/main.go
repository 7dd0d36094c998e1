// Command controller is a complete controller built on kcache's typed API, in the shape
// controller authors copy: a TypedSharedIndexInformer[*Widget] with a namespace index, a typed
// event handler that enqueues object names into a rate-limited workqueue (tombstones included,
// through DeletedObject), a pool of workers that read the cache through a typed lister (package
// listers), reconcile and retry failures with backoff, a wait for the cache to sync, and a
// graceful shutdown on SIGINT/SIGTERM.
//
// It needs no cluster: it runs against the in-memory fake API source of
// github.com/kcache/cache/testing, which it seeds and then changes (adds, updates, deletes,
// and changes hidden from the watch followed by a forced relist), printing what the
// controller sees. It exits by itself once the controller has caught up with the source;
// with -debug-addr it serves kcache's debug page (package debugpage) there, at /debug/kcache/,
// and keeps the controller running and the page serving after the summary until interrupted.
//
//	go run ./examples/controller
//	go run ./examples/controller -widgets 50 -workers 4 -klog-v 4   # also show kcache's logs
//	go run ./examples/controller -debug-addr 127.0.0.1:0            # then open the URL it prints
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"k8s.io/klog/v2"

	fcache "github.com/kcache/cache/testing"
)

func main() {
	widgets := flag.Int("widgets", 12, "number of widgets to seed the fake source with")
	workers := flag.Int("workers", 2, "number of workers reconciling keys")
	verbosity := flag.Int("klog-v", -1, "print kcache's own log messages up to this klog verbosity (-1: none)")
	debugAddr := flag.String("debug-addr", "", "serve kcache's debug page at /debug/kcache/ on this address (e.g. 127.0.0.1:0) and keep serving after the summary until interrupted")
	flag.Parse()
	if *verbosity < 0 {
		klog.SetLogger(klog.Logger{}) // the zero logger discards everything
	} else {
		klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
		klog.InitFlags(klogFlags)
		_ = klogFlags.Set("v", strconv.Itoa(*verbosity))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	src := fcache.New(fcache.Options{})
	out := newPrinter(os.Stdout)
	var linger func(*summary)
	if *debugAddr != "" {
		url, err := serveDebug(ctx, *debugAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "controller:", err)
			os.Exit(1)
		}
		out.plain("debug page: %s", url)
		linger = func(s *summary) {
			s.print(out)
			out.plain("serving the debug page at %s until interrupted (Ctrl-C)", url)
			<-ctx.Done()
		}
	}
	summary, err := run(ctx, src, out, *widgets, *workers, linger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
	if linger == nil {
		summary.print(out)
	}
	if !summary.converged {
		os.Exit(1)
	}
}
