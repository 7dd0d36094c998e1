//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time (user and system) this process has used and how often
// its threads gave up the CPU to the OS scheduler (voluntary context switches: a thread going
// to sleep, such as an idle P's M parking in futex).
func processCPUTime() (cpu time.Duration, switches int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Nvcsw), true
}
