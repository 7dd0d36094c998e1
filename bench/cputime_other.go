//go:build !unix

package main

import "time"

// processCPUTime is not available on this platform; cpu-ns/op is not reported.
func processCPUTime() (cpu time.Duration, switches int64, ok bool) { return 0, 0, false }
