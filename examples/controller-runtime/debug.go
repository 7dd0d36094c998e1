package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/kcache/cache/debugpage"
)

// serveDebug serves kcache's debug page at /debug/kcache/ on addr (port 0: any free port)
// until ctx ends, and returns the page's URL.
func serveDebug(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("debug page: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/kcache/", debugpage.New(debugpage.Options{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "debug page:", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/debug/kcache/", nil
}
