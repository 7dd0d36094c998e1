package framework

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcessStop(t *testing.T) {
	cases := []struct {
		name   string
		script string
		grace  time.Duration
		// killed is whether the exit must come from SIGKILL rather than SIGTERM.
		killed bool
	}{
		{name: "exits on SIGTERM", script: "echo started-$((1+1)); exec sleep 60", grace: time.Minute},
		{name: "ignores SIGTERM until killed", script: "trap '' TERM; echo started-$((1+1)); while :; do sleep 1; done", grace: 200 * time.Millisecond, killed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "p.log")
			p, err := startProcess("sh", "/bin/sh", []string{"-c", tc.script}, logPath)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.kill)
			// The trap must be installed before SIGTERM arrives: wait for the script's output.
			// The log also holds the command line, which says $((1+1)) where the output says 2.
			err = waitReady(context.Background(), p, 10*time.Second, func(context.Context) error {
				if !strings.Contains(logTail(logPath, 5), "started-2") {
					return errors.New("not started")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			p.stop(tc.grace)
			done, waitErr := p.exited()
			if !done {
				t.Fatal("stop returned before the process exited")
			}
			wantSignal := "signal: terminated"
			if tc.killed {
				wantSignal = "signal: killed"
			}
			if waitErr == nil || waitErr.Error() != wantSignal {
				t.Errorf("process ended with %v, want %q", waitErr, wantSignal)
			}
		})
	}
}

func TestWaitReadyReportsEarlyExit(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "p.log")
	p, err := startProcess("sh", "/bin/sh", []string{"-c", "echo bad flag >&2; exit 3"}, logPath)
	if err != nil {
		t.Fatal(err)
	}
	err = waitReady(context.Background(), p, time.Minute, func(context.Context) error { return errors.New("never ready") })
	if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "bad flag") {
		t.Fatalf("error %v, want errExited with the log's last lines", err)
	}
}
