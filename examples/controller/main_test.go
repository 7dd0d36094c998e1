package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	fcache "github.com/kcache/cache/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun runs the whole scenario and checks that the controller saw every change, caught up
// with the source, and stopped all its goroutines (TestMain checks for leaks).
func TestRun(t *testing.T) {
	cases := []struct {
		name             string
		widgets, workers int
		want             counts
	}{
		{name: "default", widgets: 12, workers: 2,
			want: counts{initialAdds: 12, adds: 2, updates: 4, deletes: 3, tombstones: 1, retries: 1}},
		{name: "one worker", widgets: 8, workers: 1,
			want: counts{initialAdds: 8, adds: 2, updates: 4, deletes: 3, tombstones: 1, retries: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			s, err := run(context.Background(), fcache.New(fcache.Options{}), newPrinter(&buf), tc.widgets, tc.workers, nil)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, buf.String())
			}
			if !s.converged || s.cacheSize != s.sourceSize {
				t.Fatalf("not converged: cache %d, source %d\n%s", s.cacheSize, s.sourceSize, buf.String())
			}
			got := s.counts
			got.reconciles, got.unchanged = 0, 0
			// Only widget-03 ends in 3, and it fails exactly once.
			if got != tc.want {
				t.Fatalf("counts %+v, want %+v\n%s", got, tc.want, buf.String())
			}
			s.print(newPrinter(&buf))
			if !strings.Contains(buf.String(), "cache equals source: yes") {
				t.Fatalf("summary does not report convergence:\n%s", buf.String())
			}
		})
	}
}
