package pager_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/pager"
)

// modelServer is a paginated LIST with the rules of a real API server, small enough to be
// obviously right: objects k0…k7 change at increasing resource versions; a list reads one
// version (the newest for "" and "0", the given one for an exact match) and every continue
// page reads the same version; versions at or below compacted are gone (410 Expired) except
// the newest; the server may return fewer items than asked, even none, with a continue token;
// a continue request that still carries a resource version is a BadRequest.
//
// Before each call the fuzz script may change objects, compact, or make the call fail.
type modelServer struct {
	snapshots []map[string]int // snapshots[rv] = name → the rv of its last change; [0] is empty
	compacted int
	cap       int // the most items the server returns per page; 0 for no cap

	script []byte // one byte per call; see serve
	calls  []modelCall
}

// modelCall is one request the server answered.
type modelCall struct {
	opts   metav1.ListOptions
	readRV int      // the version read, 0 when the call failed
	items  []string // "name@rv" of the items returned
	cont   string   // the continue token returned
	err    error
}

const modelKeys = 8

func (s *modelServer) current() int { return len(s.snapshots) - 1 }

// change applies one change, coded in b: which key, and whether it is deleted.
func (s *modelServer) change(b byte) {
	next := map[string]int{}
	for k, v := range s.snapshots[s.current()] {
		next[k] = v
	}
	rv := len(s.snapshots)
	key := "k" + strconv.Itoa(int(b)%modelKeys)
	if b&0x80 != 0 {
		delete(next, key)
	} else {
		next[key] = rv
	}
	s.snapshots = append(s.snapshots, next)
}

// sorted returns the items of snapshot rv, in key order, as "name@rv".
func (s *modelServer) sorted(rv int) []string {
	var out []string
	for k, v := range s.snapshots[rv] {
		out = append(out, k+"@"+strconv.Itoa(v))
	}
	slices.Sort(out)
	return out
}

func (s *modelServer) retained(rv int) bool { return rv > s.compacted || rv == s.current() }

func modelExpired() error { return apierrors.NewResourceExpired("model: too old") }

// serve answers one call. The call's script byte says what happens first: bits 0-1 select a
// fault (none, none, a 500, a 410), bit 2 one change, bit 3 compaction of everything but the
// newest version, bit 4 an empty page; bits 5-7 a second change's key when bit 2 is set.
func (s *modelServer) serve(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	var b byte
	if n := len(s.calls); n < len(s.script) {
		b = s.script[n]
	}
	call := modelCall{opts: opts}
	obj, err := s.answer(b, opts, &call)
	call.err = err
	s.calls = append(s.calls, call)
	if len(s.calls) > 200 {
		panic("the pager keeps asking: 200 calls for a list of at most 8 items")
	}
	return obj, err
}

func (s *modelServer) answer(b byte, opts metav1.ListOptions, call *modelCall) (runtime.Object, error) {
	if b&4 != 0 {
		s.change(b >> 5)
		s.change(b>>5 + 3)
	}
	if b&8 != 0 {
		s.compacted = s.current() - 1
	}
	switch b & 3 {
	case 2:
		return nil, apierrors.NewInternalError(errors.New("model: injected"))
	case 3:
		return nil, modelExpired()
	}

	readRV, after := s.current(), ""
	limit := int(opts.Limit)
	if opts.Continue != "" {
		if opts.ResourceVersion != "" || opts.ResourceVersionMatch != "" {
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		rv, key, ok := strings.Cut(opts.Continue, "/")
		n, err := strconv.Atoi(rv)
		if !ok || err != nil || n < 1 || n > s.current() {
			return nil, apierrors.NewBadRequest("model: bad continue token " + opts.Continue)
		}
		if !s.retained(n) {
			return nil, modelExpired()
		}
		readRV, after = n, key
	} else if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		n, err := strconv.Atoi(opts.ResourceVersion)
		if err != nil || n > s.current() {
			return nil, apierrors.NewBadRequest("model: bad resource version " + opts.ResourceVersion)
		}
		exact := opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
			(opts.ResourceVersionMatch == "" && limit > 0)
		if exact {
			if !s.retained(n) {
				return nil, modelExpired()
			}
			readRV = n
		}
	} else if opts.ResourceVersion == "0" {
		limit = 0 // the watch cache ignores the limit
	}
	if s.cap > 0 && limit > s.cap { // a server may return fewer items than asked, never more
		limit = s.cap
	}

	var rest []string
	for _, it := range s.sorted(readRV) {
		if name, _, _ := strings.Cut(it, "@"); name > after {
			rest = append(rest, it)
		}
	}
	page := rest
	if b&16 != 0 && len(rest) > 0 && opts.Limit > 0 {
		page = nil
	} else if limit > 0 && len(rest) > limit {
		page = rest[:limit]
	}
	list := &v1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(readRV)}}
	for _, it := range page {
		name, rv, _ := strings.Cut(it, "@")
		list.Items = append(list.Items, v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}})
	}
	if len(page) < len(rest) {
		last := after
		if len(page) > 0 {
			last, _, _ = strings.Cut(page[len(page)-1], "@")
		}
		list.Continue = strconv.Itoa(readRV) + "/" + last
	}
	call.readRV, call.cont = readRV, list.Continue
	call.items = page
	return list, nil
}

// FuzzPager runs List, ListWithAlloc and EachListItem against modelServer and checks the
// result against the calls the server answered: the items are exactly the list at the version
// the first page read (continue pages read the same one), or, after a continue token expired,
// exactly the full list the one fallback request returned; errors are the ones the server
// gave, except an expired continue token that the documented fallback absorbs; and every
// request carries what the pager documents.
func FuzzPager(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 1, 2, 3, 4, 5, 6}, []byte{0, 0, 0})
	f.Add([]byte{2, 1, 1, 0, 1, 2, 3}, []byte{0, 8 | 4, 0, 0})
	f.Add([]byte{3, 2, 2, 2, 1, 2, 3, 4, 0x81}, []byte{0, 16, 3, 0, 0})
	f.Add([]byte{1, 3, 3, 0, 1, 2, 3, 4}, []byte{0, 3, 0, 2})
	f.Add([]byte{2, 4, 5, 1, 1, 2, 3, 4, 5}, []byte{0, 12, 0, 0})
	f.Fuzz(func(t *testing.T, setup, script []byte) {
		if len(setup) < 4 || len(setup) > 40 || len(script) > 40 {
			return
		}
		s := &modelServer{snapshots: []map[string]int{{}}, script: script, cap: int(setup[3] % 4)}
		for _, b := range setup[4:] {
			s.change(b)
		}
		// A few old versions are already gone.
		s.compacted = s.current() / 3

		p := pager.New(s.serve)
		p.PageSize = []int64{0, 1, 2, 3, 500}[int(setup[0])%5]
		mode := int(setup[2]) % 6
		p.FullListIfExpired = mode < 5
		p.PageBufferSize = int32(setup[2]>>3) % 3

		opts := metav1.ListOptions{}
		switch setup[1] % 6 {
		case 1:
			opts.ResourceVersion = "0"
		case 2:
			opts.ResourceVersion = strconv.Itoa(s.current())
		case 3:
			opts.ResourceVersion, opts.ResourceVersionMatch = strconv.Itoa(max(1, s.current()-1)), metav1.ResourceVersionMatchExact
		case 4:
			opts.ResourceVersion, opts.ResourceVersionMatch = "1", metav1.ResourceVersionMatchNotOlderThan
		}
		if setup[1]&0x80 != 0 {
			opts.Limit = 2
		}
		if s.current() == 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			opts.ResourceVersion = ""
		}

		var got []string
		var listRV string
		var paginated bool
		var err error
		each := mode%3 == 2
		stopAt := -1 // EachListItem's callback fails at this item
		if each && setup[2]&0x40 != 0 {
			stopAt = int(setup[2]>>6) % 3
		}
		errStop := errors.New("callback stops")
		switch {
		case each:
			err = p.EachListItem(context.Background(), opts, func(obj runtime.Object) error {
				if len(got) == stopAt {
					return errStop
				}
				m, _ := meta.Accessor(obj)
				got = append(got, m.GetName()+"@"+m.GetResourceVersion())
				return nil
			})
		default:
			list := p.List
			if mode%3 == 1 {
				list = p.ListWithAlloc
			}
			var obj runtime.Object
			obj, paginated, err = list(context.Background(), opts)
			if err == nil {
				lm, _ := meta.ListAccessor(obj)
				listRV = lm.GetResourceVersion()
				items, _ := meta.ExtractList(obj)
				for _, it := range items {
					m, _ := meta.Accessor(it)
					got = append(got, m.GetName()+"@"+m.GetResourceVersion())
				}
			}
		}
		checkPager(t, s, p, opts, each, stopAt, errStop, got, listRV, paginated, err)
	})
}

// checkPager replays the server's calls with the pager's documented rules and compares.
func checkPager(t *testing.T, s *modelServer, p *pager.ListPager, opts metav1.ListOptions, each bool, stopAt int, errStop error,
	got []string, listRV string, paginated bool, err error) {
	t.Helper()
	calls := s.calls
	describe := func() string {
		var b strings.Builder
		for i, c := range calls {
			fmt.Fprintf(&b, "\n  call %d: rv=%q match=%q limit=%d continue=%q → rv %d items %v continue %q err %v",
				i, c.opts.ResourceVersion, c.opts.ResourceVersionMatch, c.opts.Limit, c.opts.Continue, c.readRV, c.items, c.cont, c.err)
		}
		return b.String()
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\noptions %+v, page size %d, fallback %v, each %v (stop at %d)\ngot %v rv %q paginated %v err %v%s",
			fmt.Sprintf(format, args...), opts, p.PageSize, p.FullListIfExpired, each, stopAt, got, listRV, paginated, err, describe())
	}
	if len(calls) == 0 {
		fail("no request")
	}

	first := opts
	if first.Limit == 0 {
		first.Limit = p.PageSize
	}
	// Walk the calls as the pager must have made them.
	var want []string
	wantPaginated := false
	handed := false // whether a page with items reached EachListItem's callback
	for i, c := range calls {
		last := i == len(calls)-1
		switch {
		case i == 0:
			if c.opts != first {
				fail("call 0: options %+v, want %+v", c.opts, first)
			}
		case calls[i-1].err != nil:
			// Only the fallback may follow an error: the caller's request without limit.
			full := opts
			full.Limit, full.Continue = 0, ""
			prev := calls[i-1]
			if prev.opts.Continue == "" || !apierrors.IsResourceExpired(prev.err) || !p.FullListIfExpired || (each && handed) {
				fail("call %d follows an error that must end the list", i)
			}
			if c.opts != full {
				fail("call %d: fallback options %+v, want %+v", i, c.opts, full)
			}
			if !last {
				fail("call %d: the fallback must be the last request", i)
			}
			if c.err == nil {
				want = c.items // the whole fallback list, nothing from earlier pages
			}
			continue
		default:
			prev := calls[i-1]
			next := prev.opts
			next.Continue, next.ResourceVersion, next.ResourceVersionMatch = prev.cont, "", ""
			if prev.cont == "" {
				fail("call %d after a page without a continue token", i)
			}
			if c.opts != next {
				fail("call %d: options %+v, want %+v", i, c.opts, next)
			}
			wantPaginated = true
		}
		if c.err != nil {
			continue
		}
		if i > 0 && c.readRV != calls[0].readRV {
			fail("call %d read version %d, the first page %d", i, c.readRV, calls[0].readRV)
		}
		want = append(want, c.items...)
		if len(c.items) > 0 {
			handed = true
		}
		if c.cont == "" && !last {
			fail("call %d after the last page", i+1)
		}
	}

	lastCall := calls[len(calls)-1]
	switch {
	case stopAt >= 0 && stopAt < len(want):
		if !errors.Is(err, errStop) {
			fail("the callback failed at item %d; err = %v, want the callback's", stopAt, err)
		}
		want = want[:stopAt]
	case lastCall.err != nil:
		if lastCall.opts.Continue != "" && apierrors.IsResourceExpired(lastCall.err) && p.FullListIfExpired && !(each && handed) {
			fail("an expired continue token must fall back to one full list")
		}
		if err == nil || err.Error() != lastCall.err.Error() {
			fail("err = %v, want the server's %v", err, lastCall.err)
		}
		if !each {
			if got != nil {
				fail("items with an error")
			}
			return
		}
		// EachListItem handed out what came before the error: a prefix of the list.
	case lastCall.cont != "":
		fail("the pager stopped before the last page")
	case err != nil:
		fail("unexpected error %v", err)
	}
	if !slices.Equal(got, want) {
		fail("items %v, want %v", got, want)
	}
	if each || err != nil {
		return
	}
	// The items are exactly one version's list: the first page's, or the fallback's.
	readRV := calls[0].readRV
	if len(calls) > 1 && calls[len(calls)-2].err != nil {
		readRV = lastCall.readRV
	}
	if !slices.Equal(want, s.sorted(readRV)) {
		fail("pages %v do not add up to the list at %d: %v", want, readRV, s.sorted(readRV))
	}
	if listRV != strconv.Itoa(readRV) {
		fail("list resource version %q, want %d", listRV, readRV)
	}
	if paginated != wantPaginated {
		fail("paginated = %v, want %v", paginated, wantPaginated)
	}
}
