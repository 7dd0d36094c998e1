package debugpage

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

var now = time.Date(2024, 5, 1, 10, 42, 7, 0, time.UTC)

// fakeSource serves fixed snapshots and a sorted key list per informer.
type fakeSource struct {
	infs []informerStatus
	keyz map[string][]keyVersion // sorted by key
	objs map[string]map[string]any
	qs   []workqueue.QueueStatus
}

func (f *fakeSource) informers() []informerStatus     { return f.infs }
func (f *fakeSource) queues() []workqueue.QueueStatus { return f.qs }

func (f *fakeSource) keys(name, after string, limit int) ([]keyVersion, int, error) {
	all, ok := f.keyz[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: %q", errNotFound, name)
	}
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > after })
	return slices.Clone(all[i:min(i+limit, len(all))]), len(all), nil
}

func (f *fakeSource) object(name, key string) (any, bool, error) {
	objs, ok := f.objs[name]
	if !ok {
		return nil, false, errNotFound
	}
	obj, ok := objs[key]
	return obj, ok, nil
}

func newFake(nKeys int) *fakeSource {
	f := &fakeSource{
		infs: []informerStatus{
			{
				Name: "pods", Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Type: "*v1.Pod",
				Synced: true, StartedAt: now.Add(-time.Minute), SyncedAt: now.Add(-58 * time.Second),
				StartupLatency: 2 * time.Second, Objects: nKeys, LastResourceVersionSeen: "4711", Lists: 2,
				Relists: relistCounts{Expired: 1}, WatchRestarts: 3, EventsIn: 120, EventsPerSecond: 2.5,
				Handlers: []handlerStatus{{
					Name: "main.(*controller).handler", Synced: true, Pending: 4, Lag: 1500 * time.Millisecond,
					Processed: 99, Coalesced: 7, CoalescingEpisodes: 1, Panics: 2,
					HandlerTime: durationHistogram{Count: 4, Sum: 2 * time.Millisecond},
				}},
			},
			{
				Name: "secrets<b>", Type: "*v1.Secret", StartedAt: now.Add(-30 * time.Second),
				NotSyncedReason: "LIST failing: 403 Forbidden for secrets at cluster scope since 10:42:07, retrying every 30s",
				LastWatchError:  "connection refused", LastWatchErrorAt: now.Add(-time.Second),
			},
		},
		keyz: map[string][]keyVersion{"secrets<b>": {}},
		objs: map[string]map[string]any{"pods": {}},
		qs: []workqueue.QueueStatus{
			{Name: "widgets", Named: true, Depth: 3, Adds: 10, Processing: 1, Retries: 2, Delayed: 1,
				Timed: true, OldestWaiting: 4 * time.Second, LongestRunning: 250 * time.Millisecond, UnfinishedWork: 250 * time.Millisecond},
			{Name: "main.newQueue", Depth: 0, Adds: 5},
		},
	}
	for i := range nKeys {
		key := fmt.Sprintf("default/pod-%05d", i)
		f.keyz["pods"] = append(f.keyz["pods"], keyVersion{Key: key, ResourceVersion: fmt.Sprint(1000 + i)})
		f.objs["pods"][key] = map[string]any{"metadata": map[string]any{"name": key}, "data": "s3cret"}
	}
	return f
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func newTestHandler(opts Options, f *fakeSource) http.Handler {
	opts.Clock = testingclock.NewFakePassiveClock(now)
	return newHandler(opts, f)
}

func TestOverviewHTML(t *testing.T) {
	h := newTestHandler(Options{}, newFake(3))
	code, body := get(t, h, "/debug/kcache/")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, want := range []string{
		`<tr class="informer" id="informer-pods">`,
		`<td class="state synced">synced</td>`,
		`<td class="state not-synced">not synced<div class="reason">LIST failing: 403 Forbidden for secrets at cluster scope since 10:42:07, retrying every 30s</div>`,
		`<code>secrets&lt;b&gt;</code>`, // escaped
		`<code>main.(*controller).handler</code>`,
		`<td class="n">1.5s</td>`, // the handler's lag
		`<code>widgets</code>`,
		`<code>main.newQueue</code> <span class="muted">(default name)</span>`,
		`<td class="n">4.0s</td>`, // the queue's oldest waiting item
		`href="keys?informer=pods"`,
		"connection refused",
		"Object contents are never shown",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	if n := strings.Count(body, `<tr class="handler">`); n != 1 {
		t.Errorf("%d handler rows, want 1", n)
	}
	if n := strings.Count(body, `<tr class="queue">`); n != 2 {
		t.Errorf("%d queue rows, want 2", n)
	}
	// Light: no script, no external asset.
	if regexp.MustCompile(`(?i)<script|src=|<link|https?://`).MatchString(body) {
		t.Error("the overview has a script or an external reference")
	}
}

func TestOverviewJSON(t *testing.T) {
	h := newTestHandler(Options{}, newFake(3))
	code, body := get(t, h, "/debug/kcache/?format=json")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var o overview
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Informers) != 2 || len(o.Queues) != 2 || !o.GeneratedAt.Equal(now) {
		t.Fatalf("decoded %+v", o)
	}
	pods, secrets := o.Informers[0], o.Informers[1]
	if pods.State != "synced" || pods.Resource != "/v1, Resource=pods" || pods.StartupLatencySeconds != 2 ||
		pods.Relists.Expired != 1 || pods.Handlers[0].LagSeconds != 1.5 || pods.Handlers[0].MeanCallSeconds != 0.0005 {
		t.Errorf("pods: %+v", pods)
	}
	if secrets.State != "not synced" || !strings.HasPrefix(secrets.NotSyncedReason, "LIST failing: 403") || secrets.SyncedAt != nil {
		t.Errorf("secrets: %+v", secrets)
	}
	if q := o.Queues[0]; q.Name != "widgets" || q.OldestWaitingSeconds == nil || *q.OldestWaitingSeconds != 4 {
		t.Errorf("widgets queue: %+v", q)
	}
	if q := o.Queues[1]; !q.DefaultName || q.OldestWaitingSeconds != nil {
		t.Errorf("an unmeasured queue has times: %+v", q)
	}
	// Field names are part of the page's contract.
	for _, want := range []string{`"notSyncedReason"`, `"lagSeconds"`, `"oldestWaitingSeconds"`, `"handlers"`, `"queues"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the JSON lacks %s", want)
		}
	}
}

var nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

// TestKeysPaged walks the key view of 10,000 objects page by page, following the page's own
// "next" links, as a browser without JavaScript would.
func TestKeysPaged(t *testing.T) {
	const n = 10000
	h := newTestHandler(Options{}, newFake(n))
	target := "/debug/kcache/keys?informer=pods"
	var seen []string
	pages := 0
	for target != "" {
		code, body := get(t, h, target)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", target, code, body)
		}
		if len(body) > 64<<10 {
			t.Fatalf("a page of %d bytes", len(body))
		}
		pages++
		for _, m := range regexp.MustCompile(`<tr class="key"><td><code>([^<]+)</code></td><td><code>(\d+)</code>`).FindAllStringSubmatch(body, -1) {
			seen = append(seen, m[1])
		}
		if pages == 1 && !strings.Contains(body, "10000 objects; keys 1–100 shown") {
			t.Errorf("first page header: %s", body[:min(len(body), 800)])
		}
		target = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			target = "/debug/kcache/" + html.UnescapeString(m[1])
		}
		if pages > n {
			t.Fatal("the pages do not end")
		}
	}
	if pages != n/100 || len(seen) != n || !slices.IsSorted(seen) || len(slices.Compact(seen)) != n {
		t.Fatalf("%d pages, %d keys (sorted %v)", pages, len(seen), slices.IsSorted(seen))
	}
	if strings.Contains(strings.Join(seen, ""), "href") {
		t.Error("keys link to objects although ShowObject is unset")
	}

	code, body := get(t, h, "/debug/kcache/keys?informer=pods&limit=3&after=default/pod-09997&from=9998&format=json")
	var page keysPage
	if err := json.Unmarshal([]byte(body), &page); code != http.StatusOK || err != nil {
		t.Fatalf("status %d, %v: %s", code, err, body)
	}
	if page.Total != n || len(page.Keys) != 2 || page.Keys[1] != (keyRVView{"default/pod-09999", "10999"}) || page.Next != "" {
		t.Errorf("the last page: %+v", page)
	}
}

func TestObjectsHiddenByDefault(t *testing.T) {
	h := newTestHandler(Options{}, newFake(3))
	code, body := get(t, h, "/debug/kcache/object?informer=pods&key=default/pod-00001")
	if code != http.StatusNotFound || strings.Contains(body, "s3cret") || !strings.Contains(body, "ShowObject") {
		t.Fatalf("status %d: %s", code, body)
	}
	_, keys := get(t, h, "/debug/kcache/keys?informer=pods")
	if strings.Contains(keys, "object?") {
		t.Error("the key view links to objects")
	}
}

func TestShowObjectRedacts(t *testing.T) {
	var calls []string
	opts := Options{ShowObject: func(informer string, obj any) (any, bool) {
		calls = append(calls, informer)
		m := obj.(map[string]any)
		if m["metadata"].(map[string]any)["name"] == "default/pod-00002" {
			return nil, false
		}
		redacted := map[string]any{"metadata": m["metadata"], "data": "REDACTED"}
		return redacted, true
	}}
	h := newTestHandler(opts, newFake(3))
	_, keys := get(t, h, "/debug/kcache/keys?informer=pods")
	if !strings.Contains(keys, `<a href="object?informer=pods&amp;key=default%2Fpod-00001">default/pod-00001</a>`) {
		t.Errorf("the key view does not link to the object: %s", keys)
	}
	code, body := get(t, h, "/debug/kcache/object?informer=pods&key=default/pod-00001")
	if code != http.StatusOK || strings.Contains(body, "s3cret") || !strings.Contains(body, "REDACTED") {
		t.Fatalf("status %d: %s", code, body)
	}
	_, body = get(t, h, "/debug/kcache/object?informer=pods&key=default/pod-00002")
	if strings.Contains(body, "s3cret") || !strings.Contains(body, "withheld") {
		t.Fatalf("a withheld object: %s", body)
	}
	if !slices.Equal(calls, []string{"pods", "pods"}) {
		t.Errorf("ShowObject calls: %v", calls)
	}
}

func TestBadRequests(t *testing.T) {
	h := newTestHandler(Options{ShowObject: func(_ string, o any) (any, bool) { return o, true }}, newFake(3))
	cases := []struct {
		target string
		code   int
		says   string
	}{
		{"/debug/kcache/keys", http.StatusBadRequest, "needs ?informer=NAME"},
		{"/debug/kcache/keys?informer=nodes", http.StatusNotFound, `no running informer "nodes"`},
		{"/debug/kcache/keys?informer=pods&limit=x", http.StatusBadRequest, "not a positive number"},
		{"/debug/kcache/keys?informer=pods&limit=-1", http.StatusBadRequest, "not a positive number"},
		{"/debug/kcache/keys?informer=pods&from=0", http.StatusBadRequest, "not a positive number"},
		{"/debug/kcache/object?informer=pods", http.StatusBadRequest, "needs ?informer=NAME&key=KEY"},
		{"/debug/kcache/object?informer=pods&key=nope", http.StatusNotFound, `has no object "nope"`},
		{"/debug/kcache/object?informer=nodes&key=a", http.StatusNotFound, `no running informer`},
		{"/debug/kcache/heap", http.StatusNotFound, `no view "heap"`},
	}
	for _, tc := range cases {
		code, body := get(t, h, tc.target)
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s: status %d, %q; want %d saying %q", tc.target, code, body, tc.code, tc.says)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/debug/kcache/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d", rec.Code)
	}
	// A huge limit is capped.
	_, body := get(t, newTestHandler(Options{PageSize: 5000}, newFake(1500)), "/debug/kcache/keys?informer=pods&format=json&limit=99999")
	var page keysPage
	_ = json.Unmarshal([]byte(body), &page)
	if len(page.Keys) != maxPageSize {
		t.Errorf("%d keys on a page, want the cap %d", len(page.Keys), maxPageSize)
	}
}

func TestFormatSeconds(t *testing.T) {
	cases := map[float64]string{0: "0", -1: "0", 0.000012: "12µs", 0.35: "350ms", 12.44: "12.4s", 200: "3m20s"}
	for in, want := range cases {
		if got := formatSeconds(in); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
}
