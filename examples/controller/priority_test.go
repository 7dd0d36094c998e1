package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	fcache "github.com/kcache/cache/testing"
)

// TestRunWithPriority runs the scenario with -priority and checks that the two widgets
// changed after the restart are handed out before any initial-list key.
//
// It runs one worker: the order of the "hand out" lines is then the queue's order. With two,
// a worker that got a key can lose the printer's mutex to the other worker for a millisecond
// (sync.Mutex lets a running goroutine barge in), during which the other hands out and prints
// the whole backlog; the log would then show a changed widget last although the queue gave it
// out second.
func TestRunWithPriority(t *testing.T) {
	*usePriority = true
	defer func() { *usePriority = false }()
	var buf bytes.Buffer
	s, err := run(context.Background(), fcache.New(fcache.Options{}), newPrinter(&buf), 12, 1, nil)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	if !s.converged {
		t.Fatalf("not converged\n%s", buf.String())
	}
	handouts := regexp.MustCompile(`hand out (\S+)\s+priority\s+(-?\d+)`).FindAllStringSubmatch(buf.String(), -1)
	if len(handouts) < 14 {
		t.Fatalf("only %d handouts\n%s", len(handouts), buf.String())
	}
	first := map[string]bool{handouts[0][1]: true, handouts[1][1]: true}
	if !first["team-b/widget-01"] || !first["team-c/widget-02"] || handouts[0][2] != "0" || handouts[1][2] != "0" {
		t.Fatalf("the changed widgets were not handed out first: %v\n%s", handouts[:3], buf.String())
	}
	low := 0
	for _, h := range handouts {
		if h[2] == "-100" {
			low++
		}
	}
	if low < 10 { // the ten unchanged initial-list widgets, at least
		t.Fatalf("%d handouts at low priority, want at least 10\n%s", low, buf.String())
	}
	if s.updates != 6 { // the two restart changes plus the scenario's four
		t.Fatalf("updates = %d, want 6", s.updates)
	}
}
