package cache

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
)

// fifoTestPop records what one Pop returned.
type fifoTestPop struct {
	name    string
	initial bool
}

func (p fifoTestPop) String() string { return fmt.Sprintf("%s/%v", p.name, p.initial) }

// fifoTestDrain closes f and pops everything, recording names, isInInitialList flags, and
// HasSynced after each pop.
func fifoTestDrain(t *testing.T, f *FIFO) (pops []fifoTestPop, synced []bool) {
	t.Helper()
	f.Close()
	for {
		_, err := f.Pop(func(obj interface{}, initial bool) error {
			pops = append(pops, fifoTestPop{obj.(*storeTestObj).Name, initial})
			return nil
		})
		if errors.Is(err, ErrFIFOClosed) {
			return pops, synced
		}
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
		synced = append(synced, f.HasSynced())
	}
}

func TestFIFO(t *testing.T) {
	obj := func(name, value string) *storeTestObj {
		return &storeTestObj{ObjectMeta: storeTestPod("ns", name, "1").ObjectMeta, Value: value}
	}
	cases := []struct {
		name         string
		ops          func(f *FIFO) error
		wantErr      bool
		wantPops     []string // name/isInInitialList
		wantSynced   []bool   // HasSynced after each pop
		syncedBefore bool     // HasSynced before popping
	}{
		{"order of first add", func(f *FIFO) error {
			_ = f.Add(obj("a", "1"))
			_ = f.Add(obj("b", "1"))
			return f.Update(obj("a", "2"))
		}, false, []string{"a/false", "b/false"}, []bool{true, true}, true},
		{"delete while queued is skipped", func(f *FIFO) error {
			_ = f.Add(obj("a", "1"))
			_ = f.Add(obj("b", "1"))
			return f.Delete(obj("a", ""))
		}, false, []string{"b/false"}, []bool{true}, true},
		{"delete then add keeps the first position", func(f *FIFO) error {
			_ = f.Add(obj("a", "1"))
			_ = f.Add(obj("b", "1"))
			_ = f.Delete(obj("a", ""))
			return f.Add(obj("a", "2"))
		}, false, []string{"a/false", "b/false"}, []bool{true, true}, true},
		{"replace is the initial list", func(f *FIFO) error {
			return f.Replace([]interface{}{obj("a", "1"), obj("b", "1"), obj("a", "2")}, "9")
		}, false, []string{"a/true", "b/true"}, []bool{false, true}, false},
		{"replace drops what came before", func(f *FIFO) error {
			_ = f.Add(obj("z", "1"))
			return f.Replace([]interface{}{obj("a", "1")}, "9")
		}, false, []string{"a/false"}, []bool{true}, true},
		{"empty first replace is synced", func(f *FIFO) error {
			return f.Replace(nil, "1")
		}, false, nil, nil, true},
		{"an initial item deleted before its pop still counts", func(f *FIFO) error {
			_ = f.Replace([]interface{}{obj("a", "1"), obj("b", "1")}, "9")
			return f.Delete(obj("b", ""))
		}, false, []string{"a/true"}, []bool{false}, false},
		{"resync requeues what is stored and not queued", func(f *FIFO) error {
			_ = f.Add(obj("a", "1"))
			_ = f.Add(obj("b", "1"))
			if _, err := f.Pop(func(interface{}, bool) error { return nil }); err != nil {
				return err
			}
			_ = f.Add(obj("c", "1"))
			return f.Resync()
		}, false, []string{"b/false", "c/false"}, []bool{true, true}, true},
		{"bad key on add", func(f *FIFO) error { return f.Add(storeTestNoMeta{}) }, true, nil, nil, false},
		{"bad key on delete", func(f *FIFO) error { return f.Delete(nil) }, true, nil, nil, false},
		{"bad key on replace changes nothing", func(f *FIFO) error {
			_ = f.Add(obj("a", "1"))
			return f.Replace([]interface{}{obj("b", "1"), storeTestNoMeta{}}, "1")
		}, true, []string{"a/false"}, []bool{true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFIFO(MetaNamespaceKeyFunc)
			err := tc.ops(f)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want one: %v", err, tc.wantErr)
			}
			var keyErr KeyError
			if err != nil && !errors.As(err, &keyErr) {
				t.Errorf("error %v is not a KeyError", err)
			}
			if got := f.HasSynced(); got != tc.syncedBefore {
				t.Errorf("HasSynced before popping = %v, want %v", got, tc.syncedBefore)
			}
			pops, synced := fifoTestDrain(t, f)
			var got []string
			for _, p := range pops {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.wantPops) {
				t.Errorf("popped %q, want %q", got, tc.wantPops)
			}
			if !slices.Equal(synced, tc.wantSynced) {
				t.Errorf("HasSynced after each pop = %v, want %v", synced, tc.wantSynced)
			}
			if f.HasSynced() != IsDone(f.HasSyncedChecker()) {
				t.Error("HasSynced and the DoneChecker disagree")
			}
			if !f.IsClosed() || f.Name() != "FIFO" {
				t.Errorf("IsClosed = %v, Name = %q", f.IsClosed(), f.Name())
			}
		})
	}
}

// TestFIFOSkippedInitialItemSettlesSync: when the last initial key was deleted before its pop,
// HasSynced turns true as soon as Pop skips it, without waiting for another object.
func TestFIFOSkippedInitialItemSettlesSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFIFO(MetaNamespaceKeyFunc)
		_ = f.Replace([]interface{}{storeTestPod("ns", "a", "1"), storeTestPod("ns", "b", "1")}, "1")
		_ = f.Delete(storeTestPod("ns", "b", "1"))
		if _, err := f.Pop(func(interface{}, bool) error { return nil }); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = f.Pop(func(interface{}, bool) error { return nil })
		}()
		synctest.Wait() // Pop skipped b and now waits
		if !f.HasSynced() {
			t.Error("HasSynced = false after the last initial key was skipped")
		}
		f.Close()
		<-done
	})
}

func TestFIFOPopReturnsProcessError(t *testing.T) {
	f := NewFIFO(MetaNamespaceKeyFunc)
	_ = f.Add(storeTestPod("ns", "a", "1"))
	boom := errors.New("boom")
	obj, err := f.Pop(func(interface{}, bool) error { return boom })
	if !errors.Is(err, boom) || obj.(*storeTestObj).Name != "a" {
		t.Errorf("Pop = %v, %v", obj, err)
	}
}

func TestFIFOPopBlocks(t *testing.T) {
	cases := []struct {
		name    string
		wake    func(f *FIFO)
		wantErr error
	}{
		{"woken by add", func(f *FIFO) { _ = f.Add(storeTestPod("ns", "a", "1")) }, nil},
		{"woken by replace", func(f *FIFO) { _ = f.Replace([]interface{}{storeTestPod("ns", "a", "1")}, "") }, nil},
		{"woken by close", func(f *FIFO) { f.Close() }, ErrFIFOClosed},
		{"not woken by delete", func(f *FIFO) { _ = f.Delete(storeTestPod("ns", "a", "1")) }, errors.New("still blocked")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := NewFIFO(MetaNamespaceKeyFunc)
				done := make(chan error, 1)
				go func() {
					_, err := f.Pop(func(interface{}, bool) error { return nil })
					done <- err
				}()
				synctest.Wait()
				tc.wake(f)
				synctest.Wait()
				select {
				case err := <-done:
					if !errors.Is(err, tc.wantErr) {
						t.Errorf("Pop = %v, want %v", err, tc.wantErr)
					}
				default:
					if tc.wantErr == nil || errors.Is(tc.wantErr, ErrFIFOClosed) {
						t.Fatal("Pop is still blocked")
					}
					f.Close()
					if err := <-done; !errors.Is(err, ErrFIFOClosed) {
						t.Errorf("Pop after Close = %v", err)
					}
				}
			})
		})
	}
}

// TestFIFOProcessDoesNotBlockProducers shows that Add proceeds while process runs.
func TestFIFOProcessDoesNotBlockProducers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFIFO(MetaNamespaceKeyFunc)
		_ = f.Add(storeTestPod("ns", "a", "1"))
		release := make(chan struct{})
		go func() {
			_, _ = f.Pop(func(interface{}, bool) error { <-release; return nil })
		}()
		synctest.Wait() // process is running
		if err := f.Add(storeTestPod("ns", "b", "1")); err != nil {
			t.Fatal(err)
		}
		close(release)
		synctest.Wait()
		pops, _ := fifoTestDrain(t, f)
		if len(pops) != 1 || pops[0].name != "b" {
			t.Errorf("remaining pops %v, want b", pops)
		}
	})
}
