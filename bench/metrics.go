package main

import (
	"math"
	"sync/atomic"
)

// benchMetric is a gauge, counter and histogram in one: an atomic value and an atomic sum of
// observations, about what a Prometheus metric costs per call.
type benchMetric struct {
	v   atomic.Uint64 // float64 bits
	n   atomic.Int64
	sum atomic.Uint64 // float64 bits
}

func (m *benchMetric) Inc()              { m.add(&m.v, 1) }
func (m *benchMetric) Dec()              { m.add(&m.v, -1) }
func (m *benchMetric) Set(v float64)     { m.v.Store(math.Float64bits(v)) }
func (m *benchMetric) Observe(v float64) { m.n.Add(1); m.add(&m.sum, v) }

func (m *benchMetric) add(bits *atomic.Uint64, d float64) {
	for {
		old := bits.Load()
		if bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}
