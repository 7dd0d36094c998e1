package cache

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// infTestLogContext returns a context whose logger records into a buffer, and the buffer.
func infTestLogContext(ctx context.Context) (context.Context, ktesting.Buffer) {
	logger := ktesting.NewLogger(ktesting.NopTL{}, ktesting.NewConfig(ktesting.BufferLogs(true)))
	return klog.NewContext(ctx, logger), logger.GetSink().(ktesting.Underlier).GetBuffer()
}

func TestWaitFor(t *testing.T) {
	cases := []struct {
		name     string
		done     []bool // which checkers are finished before waiting
		finishIn bool   // finish the unfinished ones while waiting
		cancel   bool   // cancel the context while waiting
		want     bool
		wantLogs []string
	}{
		{name: "no checkers", want: true, wantLogs: []string{`Waiting for="caches"`}},
		{name: "all done already", done: []bool{true, true}, want: true, wantLogs: []string{`Done waiting for="caches" instance="c0"`, `instance="c1"`}},
		{name: "finish while waiting", done: []bool{true, false}, finishIn: true, want: true, wantLogs: []string{`instance="c1"`}},
		{name: "cancelled", done: []bool{true, false, false}, cancel: true, want: false,
			wantLogs: []string{`Timed out waiting for="caches" cause="context canceled" instances=["c1","c2"]`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ctx, logs := infTestLogContext(ctx)
				var checkers []DoneChecker
				var pending []*infTestChecker
				for i, d := range tc.done {
					c := newInfTestChecker("c" + string(rune('0'+i)))
					if d {
						c.finish()
					} else {
						pending = append(pending, c)
					}
					checkers = append(checkers, c)
				}
				var got atomic.Bool
				returned := make(chan struct{})
				go func() {
					defer close(returned)
					got.Store(WaitFor(ctx, "caches", checkers...))
				}()
				synctest.Wait()
				if tc.finishIn {
					for _, c := range pending {
						select {
						case <-returned:
							t.Fatal("WaitFor returned before the checkers finished")
						default:
						}
						c.finish()
					}
				}
				if tc.cancel {
					cancel()
				}
				<-returned
				if got.Load() != tc.want {
					t.Fatalf("WaitFor = %v, want %v", got.Load(), tc.want)
				}
				for _, w := range tc.wantLogs {
					if !strings.Contains(logs.String(), w) {
						t.Errorf("log lacks %s:\n%s", w, logs.String())
					}
				}
			})
		})
	}
}

// TestWaitForQuiet: with an empty what nothing is logged.
func TestWaitForQuiet(t *testing.T) {
	ctx, logs := infTestLogContext(context.Background())
	c := newInfTestChecker("c")
	c.finish()
	if !WaitFor(ctx, "", c) {
		t.Fatal("WaitFor = false")
	}
	if logs.String() != "" {
		t.Fatalf("logged %q", logs.String())
	}
}

func TestWaitForCacheSync(t *testing.T) {
	cases := []struct {
		name      string
		syncAfter []time.Duration // per func; negative = never
		stopAfter time.Duration
		want      bool
	}{
		{name: "no funcs", want: true, stopAfter: time.Hour},
		{name: "synced at once", syncAfter: []time.Duration{0, 0}, stopAfter: time.Hour, want: true},
		{name: "synced later", syncAfter: []time.Duration{time.Second, 3 * time.Second}, stopAfter: time.Hour, want: true},
		{name: "stopped first", syncAfter: []time.Duration{0, -1}, stopAfter: 5 * time.Second, want: false},
	}
	for _, tc := range cases {
		for _, variant := range []string{"WaitForCacheSync", "WaitForNamedCacheSync", "WithContext"} {
			t.Run(tc.name+"/"+variant, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					var funcs []InformerSynced
					for _, d := range tc.syncAfter {
						funcs = append(funcs, func() bool { return d >= 0 && time.Since(start) >= d })
					}
					ctx, cancel := context.WithTimeout(context.Background(), tc.stopAfter)
					defer cancel()
					var got bool
					switch variant {
					case "WaitForCacheSync":
						got = WaitForCacheSync(ctx.Done(), funcs...)
					case "WaitForNamedCacheSync":
						got = WaitForNamedCacheSync("test-controller", ctx.Done(), funcs...)
					default:
						got = WaitForNamedCacheSyncWithContext(ctx, funcs...)
					}
					if got != tc.want {
						t.Fatalf("got %v, want %v", got, tc.want)
					}
					if tc.want {
						var last time.Duration
						for _, d := range tc.syncAfter {
							last = max(last, d)
						}
						// Polling every 100ms: done within one period of the last sync.
						if waited := time.Since(start); waited < last || waited > last+syncedPollPeriod {
							t.Fatalf("returned after %v, want within %v of %v", waited, syncedPollPeriod, last)
						}
					}
				})
			})
		}
	}
}

type infTestTypeA struct{}
type infTestTypeB struct{}

func TestSyncResultAsError(t *testing.T) {
	errStop := errors.New("stopped")
	ta, tb := reflect.TypeOf(infTestTypeA{}), reflect.TypeOf(&infTestTypeB{})
	cases := []struct {
		name    string
		result  SyncResult
		wantErr string
	}{
		{name: "synced", result: SyncResult{Synced: map[reflect.Type]bool{ta: true}}},
		{name: "unsynced sorted", result: SyncResult{Err: errStop, Synced: map[reflect.Type]bool{tb: false, ta: false}},
			wantErr: "failed to sync all caches: *cache.infTestTypeB, cache.infTestTypeA: stopped"},
		{name: "only unsynced listed", result: SyncResult{Err: errStop, Synced: map[reflect.Type]bool{tb: true, ta: false}},
			wantErr: "failed to sync all caches: cache.infTestTypeA: stopped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.result.AsError()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("AsError = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("AsError = %v, want %q", err, tc.wantErr)
			}
			if !errors.Is(err, errStop) {
				t.Fatal("AsError does not wrap Err")
			}
		})
	}
}
