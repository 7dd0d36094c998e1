//go:build !linux

package framework

import "syscall"

// setDeathSignal does nothing outside Linux: there is no parent-death signal, so only the
// harness's own teardown (Cleanup, signal handler) stops the servers.
func setDeathSignal(*syscall.SysProcAttr) {}
