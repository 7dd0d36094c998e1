package framework

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// HandleSignals runs cleanup and exits with status 2 when the process receives SIGINT or
// SIGTERM, so that an interrupted `go test` leaves no server behind. The returned function
// stops listening for the signals and waits for the watching goroutine to end; call it
// before cleaning up normally.
func HandleSignals(cleanup func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	quit := make(chan struct{})
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		defer close(done)
		select {
		case sig := <-ch:
			fmt.Fprintf(os.Stderr, "framework: %v: stopping the test servers\n", sig)
			cleanup()
			os.Exit(2)
		case <-quit:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(quit)
		<-done
	}
}
