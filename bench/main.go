// Command bench runs the same workloads against kcache and client-go v0.37.2 in one process,
// interleaved, and prints kcache/client-go ratios with their spread over rounds.
//
// Every workload is written once against the small interfaces in impl.go; each round runs
// it for one implementation and then the other (the order alternates between rounds), so
// both see the same machine state. On a shared or throttled machine absolute times drift
// from round to round, but the ratio within a round holds: read the ratio column, and trust
// it as far as its spread says.
//
//	go run . -rounds 5 -benchtime 200ms          # everything, quick
//	go run . -run 'workqueue/AddGetDone' -rounds 9
//	go run . -impl kcache -run 'workers=16/unique' -mutexprofile mu.out -trace trace.out
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// workload is one benchmark body, run once per implementation and round.
type workload struct {
	group, name string
	doc         string
	// heavy workloads do one large operation per run (b.N is 1); they ignore -benchtime.
	heavy bool
	run   func(b *testing.B, impl *Impl)
}

func (w workload) id() string { return w.group + "/" + w.name }

var workloads []workload

// allImpls are the implementations -impl can name; variant.sh builds in one more.
var allImpls = []*Impl{kcacheImpl, clientgoImpl}

func register(w workload) { workloads = append(workloads, w) }

var (
	flagRounds    = flag.Int("rounds", 5, "rounds per workload; each runs every implementation once")
	flagBenchtime = flag.String("benchtime", "200ms", "run time (or Nx iterations) of one light workload run")
	flagRun       = flag.String("run", "", "only workloads whose group/name matches this regexp")
	flagImpl      = flag.String("impl", "", "only this implementation (kcache or client-go), e.g. for profiling; two separated by a comma are compared (ratio first/second)")
	flagFull      = flag.Bool("full", false, "full-size heavy workloads (100k pods, 1M events) instead of a tenth")
	flagList      = flag.Bool("list", false, "list the workloads and exit")
	flagVerbose   = flag.Bool("v", false, "print every run's result as it finishes, and klog output")
	flagProcs     = flag.Int("procs", 0, "GOMAXPROCS for the run (0: leave as is)")
	flagCPUProf   = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flagMutexProf = flag.String("mutexprofile", "", "write a mutex contention profile to this file")
	flagBlockProf = flag.String("blockprofile", "", "write a blocking profile to this file")
	flagMemProf   = flag.String("memprofile", "", "write an allocation profile (every allocation) to this file")
	flagTrace     = flag.String("trace", "", "write an execution trace to this file")
	flagPeakProf  = flag.String("peakprofile", "", "memory rows: write a heap profile to this file at each new highest live heap a forced collection measures (use with -impl)")
)

func main() {
	testing.Init()
	flag.Parse()
	if *flagList {
		for _, w := range workloads {
			fmt.Printf("%-50s %s\n", w.id(), w.doc)
		}
		return
	}
	registerMetrics()
	if !*flagVerbose {
		// Reflectors warn about the watches the relist workloads end on purpose.
		klog.SetLogger(logr.Discard())
	}
	if *flagProcs > 0 {
		runtime.GOMAXPROCS(*flagProcs)
	}
	impls := []*Impl{kcacheImpl, clientgoImpl}
	if *flagImpl != "" {
		impls = nil
		for _, name := range strings.Split(*flagImpl, ",") {
			i := slices.IndexFunc(allImpls, func(impl *Impl) bool { return impl.Name == name })
			if i < 0 {
				fatalf("unknown implementation %q in -impl: want kcache, client-go, kcache-strip, kcache-compact, kcache-compact-z, bridge, bridge-maxpending, cr-client-go, cr-bridge, cr-bridge-maxpending or one built in by variant.sh", name)
			}
			impls = append(impls, allImpls[i])
		}
		if len(impls) > 2 {
			fatalf("-impl names at most two implementations")
		}
	}
	re, err := regexp.Compile(*flagRun)
	if err != nil {
		fatalf("bad -run: %v", err)
	}
	stop := startProfiles()
	defer stop()

	size := "a tenth of full size (10k pods, 100k events)"
	if *flagFull {
		size = "full size (100k pods, 1M events)"
	}
	fmt.Printf("%s vs %s — %s %s/%s GOMAXPROCS=%d, %d rounds, benchtime %s, heavy workloads at %s, %s\n",
		impls[0].Name, impls[len(impls)-1].Name, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), *flagRounds, *flagBenchtime, size,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	var table []row
	for _, w := range workloads {
		if !re.MatchString(w.id()) {
			continue
		}
		results := make([][]testing.BenchmarkResult, len(impls))
		var c2c []float64 // ns, measured before each round
		for r := range *flagRounds {
			rt := coreToCore()
			c2c = append(c2c, float64(rt.Nanoseconds()))
			if *flagVerbose {
				fmt.Fprintf(os.Stderr, "%-52s round %d: core-to-core round trip %v\n", w.id(), r+1, rt)
			}
			for k := range impls {
				i := k
				if r%2 == 1 {
					i = len(impls) - 1 - k // alternate the order: A B, B A, ...
				}
				results[i] = append(results[i], runOnce(w, impls[i]))
			}
		}
		rows := summarize(w, impls, results)
		rows[0].c2c = c2c
		table = append(table, rows...)
		for _, r := range rows {
			fmt.Fprintln(os.Stderr, r.format())
		}
	}
	fmt.Println()
	printTable(table, impls)
}

func runOnce(w workload, impl *Impl) testing.BenchmarkResult {
	bt := *flagBenchtime
	if w.heavy {
		bt = "1x"
	}
	if err := flag.Set("test.benchtime", bt); err != nil {
		fatalf("benchtime: %v", err)
	}
	runtime.GC()
	var failed string
	res := testing.Benchmark(func(b *testing.B) {
		defer func() {
			if b.Failed() {
				failed = "failed"
			}
		}()
		w.run(b, impl)
	})
	if failed != "" || res.N == 0 {
		fatalf("%s on %s failed (see output above)", w.id(), impl.Name)
	}
	if *flagVerbose {
		fmt.Fprintf(os.Stderr, "%-52s %-10s %s %s\n", w.id(), impl.Name, res.String(), res.MemString())
	}
	return res
}

func startProfiles() (stop func()) {
	var stops []func()
	create := func(name string) *os.File {
		f, err := os.Create(name)
		if err != nil {
			fatalf("%v", err)
		}
		return f
	}
	if *flagCPUProf != "" {
		f := create(*flagCPUProf)
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("cpu profile: %v", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if *flagTrace != "" {
		f := create(*flagTrace)
		if err := trace.Start(f); err != nil {
			fatalf("trace: %v", err)
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	for _, p := range []struct {
		file *string
		name string
		on   func()
	}{
		{flagMutexProf, "mutex", func() { runtime.SetMutexProfileFraction(1) }},
		{flagBlockProf, "block", func() { runtime.SetBlockProfileRate(1) }},
		{flagMemProf, "allocs", func() { runtime.MemProfileRate = 1 }},
	} {
		if *p.file == "" {
			continue
		}
		p.on()
		name, file := p.name, *p.file
		stops = append(stops, func() {
			f := create(file)
			defer f.Close()
			if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
				fatalf("%s profile: %v", name, err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

// scale returns n for -full runs and n/10 otherwise.
func scale(n int) int {
	if *flagFull {
		return n
	}
	return n / 10
}
