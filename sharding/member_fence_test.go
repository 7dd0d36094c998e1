package sharding

import (
	"testing"
)

func TestFence(t *testing.T) {
	f := newFence()
	if f.enter() {
		t.Fatal("a new fence admitted work before the lease was held")
	}
	f.open()
	for range 2 {
		if !f.enter() {
			t.Fatal("an open fence refused work")
		}
	}
	drained := f.close()
	if f.enter() {
		t.Fatal("a closed fence admitted work")
	}
	if f.ctx.Err() == nil {
		t.Fatal("closing did not cancel the fence's context")
	}
	f.exit()
	select {
	case <-drained:
		t.Fatal("drained with work in flight")
	default:
	}
	f.exit()
	select {
	case <-drained:
	default:
		t.Fatal("not drained after the last exit")
	}
	if again := f.close(); again != drained {
		t.Fatal("a second close returned another channel")
	}
}

func TestFenceExitWithoutEnterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("exit without enter did not panic")
		}
	}()
	f := newFence()
	defer f.close()
	f.exit()
}
