package clientgo_test

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// captureLogger is a logger that keeps every line it is given.
type captureLogger struct {
	logr.Logger
	mu  sync.Mutex // mu guards out
	out []string
}

func newCaptureLogger() *captureLogger {
	c := &captureLogger{}
	c.Logger = funcr.New(func(prefix, args string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.out = append(c.out, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
	return c
}

func (c *captureLogger) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.out...)
}

func (c *captureLogger) has(substr string) bool {
	for _, l := range c.lines() {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// synctestRun runs f in a synctest bubble: time passes only when every goroutine waits.
func synctestRun(t *testing.T, f func(t *testing.T)) {
	synctest.Test(t, f)
}
