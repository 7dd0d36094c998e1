package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// printer writes timestamped lines from several goroutines without interleaving them.
type printer struct {
	mu    sync.Mutex // mu guards w
	w     io.Writer
	start time.Time
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, start: time.Now()}
}

func (p *printer) logf(who, format string, args ...interface{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%7.3fs] %-9s %s\n", time.Since(p.start).Seconds(), who, fmt.Sprintf(format, args...))
}

func (p *printer) plain(format string, args ...interface{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
