package framework

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the child when the thread that started it dies, so
// no server outlives a test binary that crashes or is killed. Go only ends an OS thread when a
// goroutine locked to it exits, which the harness never does.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
