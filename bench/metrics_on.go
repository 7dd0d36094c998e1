package main

import (
	"flag"

	"github.com/prometheus/client_golang/prometheus"

	kcacheprom "github.com/kcache/cache/prometheus"
)

var flagMetrics = flag.Bool("metrics", false, "register kcache's Prometheus metrics (the prometheus module's Register, with a registry of its own) before the first run, so that every informer and queue of the kcache implementation records them; run with -impl kcache,variant and a variant built by variant.sh from the same checkout, whose metrics stay off, to measure what they cost")

// registerMetrics turns kcache's metrics on when -metrics is set.
func registerMetrics() {
	if !*flagMetrics {
		return
	}
	if err := kcacheprom.Register(prometheus.NewRegistry()); err != nil {
		fatalf("-metrics: %v", err)
	}
}
