package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one running server executable whose output goes to a log file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	logFile *os.File
	// done is closed once the process has exited and waitErr is set.
	done    chan struct{}
	waitErr error
}

// startProcess runs bin with args, appending its stdout and stderr to logPath. The child is
// killed by the kernel if the test process dies first (see setDeathSignal).
func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("framework: %s log: %w", name, err)
	}
	fmt.Fprintf(logFile, "=== %s %s %q\n", time.Now().Format(time.RFC3339Nano), bin, args)
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setDeathSignal(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("framework: start %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has already ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM and waits up to grace for the process to exit, then kills it. It returns
// once the process is gone.
func (p *process) stop(grace time.Duration) {
	if done, _ := p.exited(); done {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.kill()
	}
}

// kill sends SIGKILL and waits for the process to exit.
func (p *process) kill() {
	if done, _ := p.exited(); done {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// logTail returns the last n lines of the process's log, for error messages.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// errExited is returned by readiness waits when the server process ended while being waited for.
var errExited = errors.New("process exited")
