package framework

import (
	"context"
	"fmt"
	"time"
)

// waitReady calls probe every 100ms until it succeeds, the process exits, or timeout passes.
func waitReady(ctx context.Context, p *process, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("framework: %s: %w (%v); log %s ends with:\n%s", p.name, errExited, err, p.logPath, logTail(p.logPath, 30))
		}
		probeCtx, probeCancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe(probeCtx)
		probeCancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("framework: %s not ready after %v: %v; log %s ends with:\n%s", p.name, timeout, last, p.logPath, logTail(p.logPath, 30))
		case <-tick.C:
		}
	}
}
