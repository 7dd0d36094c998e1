package cache

import (
	"errors"
	"testing"
)

func TestDeltasOldestNewest(t *testing.T) {
	a1, a2, a3 := fifoTestObj("a", 1), fifoTestObj("a", 2), fifoTestObj("a", 3)
	cases := []struct {
		name                   string
		deltas                 Deltas
		wantOldest, wantNewest interface{}
	}{
		{"empty", Deltas{}, nil, nil},
		{"nil", nil, nil, nil},
		{"one", Deltas{{Added, a1}}, a1, a1},
		{"several", Deltas{{Added, a1}, {Updated, a2}, {Deleted, a3}}, a1, a3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := func(d *Delta) interface{} {
				if d == nil {
					return nil
				}
				return d.Object
			}
			if got := obj(tc.deltas.Oldest()); got != tc.wantOldest {
				t.Errorf("Oldest = %v, want %v", got, tc.wantOldest)
			}
			if got := obj(tc.deltas.Newest()); got != tc.wantNewest {
				t.Errorf("Newest = %v, want %v", got, tc.wantNewest)
			}
		})
	}
	// Newest points into the slice: callers may rely on that to edit the last delta.
	d := Deltas{{Added, a1}}
	d.Newest().Type = Updated
	if d[0].Type != Updated {
		t.Error("Newest does not point into the slice")
	}
}

func TestQueueErrorsKeepClientGoText(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"ErrFIFOClosed", ErrFIFOClosed, "DeltaFIFO: manipulating with closed queue"},
		{"ErrZeroLengthDeltasObject", ErrZeroLengthDeltasObject, "0 length Deltas object; can't get key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err.Error() != tc.want {
				t.Errorf("text %q, want %q", tc.err.Error(), tc.want)
			}
		})
	}
	// Every FIFO returns the same sentinel once closed and empty.
	queues := []Queue{
		NewDeltaFIFOWithOptions(DeltaFIFOOptions{}),
		NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}),
	}
	for _, q := range queues {
		q.Close()
		if _, err := q.Pop(func(interface{}, bool) error { return nil }); !errors.Is(err, ErrFIFOClosed) {
			t.Errorf("%T.Pop after Close = %v", q, err)
		}
	}
}
