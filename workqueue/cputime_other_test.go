//go:build !unix

package workqueue_test

import "time"

// processCPUTime is not available here: benchmarks then report no cpu-ns/op.
func processCPUTime() (time.Duration, bool) { return 0, false }
