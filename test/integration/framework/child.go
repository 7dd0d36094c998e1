package framework

import (
	"context"
	"os/exec"
	"syscall"
)

// ChildCommand is exec.CommandContext for helper processes a test starts (such as the test
// binary itself with a different environment): like the servers, the child is killed if the
// test process dies.
func ChildCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setDeathSignal(cmd.SysProcAttr)
	return cmd
}
