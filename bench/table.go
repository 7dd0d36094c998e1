package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"text/tabwriter"
	"time"
)

// cpuMeter reports the process's CPU time per op as "cpu-ns/op". On a shared machine wall
// time also counts waiting for other processes; CPU time counts only this one's work.
type cpuMeter struct {
	start    time.Duration
	switches int64
	ok       bool
}

func startCPU() cpuMeter {
	t, sw, ok := processCPUTime()
	return cpuMeter{t, sw, ok}
}

// report adds cpu-ns/op and, with -v, the OS-level thread sleeps per 1000 ops.
func (m cpuMeter) report(b *testing.B) {
	if end, sw, ok := processCPUTime(); ok && m.ok && b.N > 0 {
		b.ReportMetric(float64(end-m.start)/float64(b.N), "cpu-ns/op")
		if *flagVerbose {
			b.ReportMetric(float64(sw-m.switches)*1000/float64(b.N), "sleeps/kop")
		}
	}
}

// row is one metric of one workload: each implementation's values over the rounds, and the
// per-round ratios of the first implementation to the second.
type row struct {
	workload string
	metric   string
	values   [][]float64 // per implementation, per round
	ratios   []float64   // values[0][r] / values[1][r]; empty with one implementation
	// c2c holds the core-to-core round trip (ns) measured before each round (coreToCore); set
	// on a workload's first row only.
	c2c []float64
}

// summarize turns the results of one workload into rows: ns/op, cpu-ns/op, B/op and
// allocs/op (the last two when anything allocates), then the workload's own metrics.
func summarize(w workload, impls []*Impl, results [][]testing.BenchmarkResult) []row {
	get := map[string]func(testing.BenchmarkResult) float64{
		"ns/op":     func(r testing.BenchmarkResult) float64 { return float64(r.T.Nanoseconds()) / float64(r.N) },
		"B/op":      func(r testing.BenchmarkResult) float64 { return float64(r.MemBytes) / float64(r.N) },
		"allocs/op": func(r testing.BenchmarkResult) float64 { return float64(r.MemAllocs) / float64(r.N) },
	}
	metrics := []string{"ns/op"}
	if _, ok := results[0][0].Extra["cpu-ns/op"]; ok {
		metrics = append(metrics, "cpu-ns/op")
	}
	metrics = append(metrics, "B/op", "allocs/op")
	var extra []string
	for k := range results[0][0].Extra {
		if k != "cpu-ns/op" {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	metrics = append(metrics, extra...)

	var rows []row
	for _, m := range metrics {
		r := row{workload: w.id(), metric: m}
		any := false
		for i := range impls {
			var vs []float64
			for _, res := range results[i] {
				var v float64
				if f, ok := get[m]; ok {
					v = f(res)
				} else {
					v = res.Extra[m]
				}
				any = any || v != 0
				vs = append(vs, v)
			}
			r.values = append(r.values, vs)
		}
		if !any && (m == "B/op" || m == "allocs/op") {
			continue // nothing allocates: say so once, in the table's note
		}
		if len(impls) == 2 {
			for k := range r.values[0] {
				r.ratios = append(r.ratios, ratio(r.values[0][k], r.values[1][k]))
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func ratio(a, b float64) float64 {
	switch {
	case a == 0 && b == 0:
		return 1
	case b == 0:
		return math.Inf(1)
	}
	return a / b
}

// medianSpread returns the median of vs and the half-range around it as a fraction of the
// median: "±20%" means the values span 0.8–1.2 times the median.
func medianSpread(vs []float64) (median, spread float64) {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0, 0
	}
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	if median != 0 {
		spread = (s[n-1] - s[0]) / 2 / median
	}
	return median, spread
}

func (r row) format() string {
	s := fmt.Sprintf("%-52s %-10s", r.workload, r.metric)
	if len(r.ratios) > 0 {
		m, _ := medianSpread(r.ratios)
		s += fmt.Sprintf(" ratio %s [%s–%s]", fmtRatio(m), fmtRatio(slices.Min(r.ratios)), fmtRatio(slices.Max(r.ratios)))
	}
	for _, vs := range r.values {
		m, sp := medianSpread(vs)
		s += fmt.Sprintf("  %s ±%.0f%%", fmtValue(m), 100*sp)
	}
	if len(r.c2c) > 0 {
		s += "  c2c " + fmtC2C(r.c2c)
	}
	return s
}

// fmtC2C formats the core-to-core round trips of a workload's rounds: their median, and their
// range when the slowest is more than 1.5 times the fastest (the rounds did not all run with
// the CPUs placed alike). "?" stands for a round where it could not be measured.
func fmtC2C(ns []float64) string {
	if slices.Contains(ns, 0) {
		return "?"
	}
	m, _ := medianSpread(ns)
	lo, hi := slices.Min(ns), slices.Max(ns)
	if hi > 1.5*lo {
		return fmt.Sprintf("%.0f [%.0f–%.0f]", m, lo, hi)
	}
	return fmt.Sprintf("%.0f", m)
}

func printTable(rows []row, impls []*Impl) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "workload\tmetric\t"
	if len(impls) == 2 {
		header += "ratio\tmin–max\t"
	}
	for _, impl := range impls {
		header += impl.Name + "\tspread\t"
	}
	header += "c2c ns\t"
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		line := r.workload + "\t" + r.metric + "\t"
		if len(r.ratios) > 0 {
			m, _ := medianSpread(r.ratios)
			line += fmtRatio(m) + "\t" + fmtRatio(slices.Min(r.ratios)) + "–" + fmtRatio(slices.Max(r.ratios)) + "\t"
		}
		for _, vs := range r.values {
			m, sp := medianSpread(vs)
			line += fmtValue(m) + "\t" + fmt.Sprintf("±%.0f%%", 100*sp) + "\t"
		}
		if len(r.c2c) > 0 {
			line += fmtC2C(r.c2c)
		}
		line += "\t"
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(impls) == 2 {
		fmt.Printf("\nratio = %s/%s per round, median over rounds (lower is better for every metric);\n", impls[0].Name, impls[1].Name)
		fmt.Println("min–max = the range of the per-round ratios; spread = half the range of an implementation's own")
		fmt.Println("values over rounds, relative to its median. B/op and allocs/op rows are left out where both are 0.")
		fmt.Println("c2c ns = the core-to-core round trip of a cache line measured before each round, median [and")
		fmt.Println("range, when the rounds differed]: contended rows are only comparable between runs at like values.")
	}
}

func fmtRatio(r float64) string {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.2f", r)
}

func fmtValue(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a < 0.01:
		return fmt.Sprintf("%.2g", v) // e.g. allocs/op of a map growing now and then
	}
	return fmt.Sprintf("%.2f", v)
}
