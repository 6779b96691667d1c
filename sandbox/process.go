package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// process is a server process of a sandbox: started, waited for, stopped
// or killed. MariaDB and PostgreSQL instances differ only in how they are
// started, pinged and asked to stop.
type process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	group   bool // the process leads its own group: Kill takes its children too
}

// start starts cmd and waits until ping answers, the process exits (its
// log's tail in the error), ctx ends or 60 s pass.
func (p *process) start(ctx context.Context, name string, cmd *exec.Cmd, ping func(context.Context) error, logTail func() string) error {
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: start %s: %w", name, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go func(exited chan struct{}) {
		p.waitErr = cmd.Wait()
		close(exited)
	}(p.exited)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if ping(ctx) == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("sandbox: %s exited during start-up (%v): %s", name, p.waitErr, logTail())
		case <-ctx.Done():
			p.Kill()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Kill()
			return fmt.Errorf("sandbox: %s not ready after 60s: %s", name, logTail())
		}
	}
}

// Running reports whether the server process is alive.
func (p *process) Running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Kill stops the server with SIGKILL, as a crash would.
func (p *process) Kill() {
	if !p.Running() {
		return
	}
	if p.group {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	} else {
		p.cmd.Process.Kill()
	}
	<-p.exited
}

// stop asks the server to shut down with sig, then kills it after 60 s.
func (p *process) stop(sig syscall.Signal) {
	if !p.Running() {
		return
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(60 * time.Second):
		p.Kill()
	}
}
