package debugpage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/utils/clock"

	"github.com/kcache/cache"
	"github.com/kcache/cache/workqueue"
)

// Options configures the page. The zero value is a valid configuration: every informer and
// queue, key views of 100 keys, no object contents.
type Options struct {
	// ShowObject, when set, turns on the object view: each key of the key view links to the
	// object's contents, which the page shows as the JSON encoding of what ShowObject returns.
	// ShowObject is the redaction hook: it receives the informer's name and the cached object
	// itself (which it must not modify), and returns what to show — the object, a redacted copy
	// of it — and true, or false to withhold the object. Defaults to nil: object contents are
	// never shown, only keys and resourceVersions (caches hold Secrets).
	ShowObject func(informer string, obj any) (shown any, ok bool)

	// PageSize is the number of keys per page of the key view. Defaults to 100 if unset; at
	// most 1000.
	PageSize int

	// Clock gives the time the page is generated at. Defaults to clock.RealClock{}.
	Clock clock.PassiveClock
}

// maxPageSize bounds the keys of one page, also when a request asks for more.
const maxPageSize = 1000

// New returns the debug page's handler. Mount it on a path that ends in a slash, next to pprof:
//
//	mux.Handle("/debug/kcache/", debugpage.New(debugpage.Options{}))
//
// The page uses relative links only, so it works under any prefix. It serves, below that path:
//
//	""        every informer with its handlers, and every workqueue (HTML; ?format=json for JSON)
//	"keys"    ?informer=NAME: the informer's keys and resourceVersions, a page at a time
//	          (&after=KEY continues after KEY, &limit=N sets the page size; ?format=json)
//	"object"  ?informer=NAME&key=KEY: one object, only when Options.ShowObject is set
//
// An unknown informer or key gets 404, a malformed parameter 400, each with a plain-text
// message. The handler is safe for concurrent use; each request reads fresh snapshots.
//
// New turns on cache.EnableInformerTiming (handler lag and call times) and
// workqueue.EnableTiming (the age of the oldest waiting item, the longest running one and the
// unfinished work of queues created afterwards, without a metrics provider): create the page
// before the workqueues.
func New(opts Options) http.Handler {
	cache.EnableInformerTiming()
	workqueue.EnableTiming()
	return newHandler(opts, processSource{})
}

func newHandler(opts Options, src source) *handler {
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	opts.PageSize = min(opts.PageSize, maxPageSize)
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &handler{opts: opts, src: src}
}

type handler struct {
	opts Options
	src  source
}

// ServeHTTP dispatches on the last element of the path.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "debugpage: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	view := ""
	if !strings.HasSuffix(p, "/") {
		view = p[strings.LastIndexByte(p, '/')+1:]
	}
	switch view {
	case "":
		h.serveOverview(w, r)
	case "keys":
		h.serveKeys(w, r)
	case "object":
		h.serveObject(w, r)
	default:
		http.Error(w, fmt.Sprintf("debugpage: no view %q (the views are the overview, keys and object)", view), http.StatusNotFound)
	}
}

func wantsJSON(r *http.Request) bool { return r.URL.Query().Get("format") == "json" }

func (h *handler) serveOverview(w http.ResponseWriter, r *http.Request) {
	o := newOverview(h.opts.Clock.Now(), h.src.informers(), h.src.queues())
	if wantsJSON(r) {
		writeJSON(w, o)
		return
	}
	writeHTML(w, overviewTemplate, struct {
		overview
		ShowObjects bool
	}{o, h.opts.ShowObject != nil})
}

// keysPage is the key view, as HTML and as JSON.
type keysPage struct {
	Informer string       `json:"informer"`
	Total    int          `json:"total"`
	From     int          `json:"from"` // 1-based position of the first key shown
	Keys     []keyRVView  `json:"keys"`
	Next     string       `json:"next,omitempty"` // the after= value of the next page
	Limit    int          `json:"limit"`
	Objects  bool         `json:"-"`
	Start    template.URL `json:"-"`
	NextURL  template.URL `json:"-"`
}

type keyRVView struct {
	Key             string `json:"key"`
	ResourceVersion string `json:"resourceVersion"`
}

func (h *handler) serveKeys(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("informer")
	if name == "" {
		http.Error(w, "debugpage: the key view needs ?informer=NAME", http.StatusBadRequest)
		return
	}
	limit := h.opts.PageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			http.Error(w, fmt.Sprintf("debugpage: limit %q is not a positive number", s), http.StatusBadRequest)
			return
		}
		limit = min(n, maxPageSize)
	}
	from := 1
	if s := q.Get("from"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			http.Error(w, fmt.Sprintf("debugpage: from %q is not a positive number", s), http.StatusBadRequest)
			return
		}
		from = n
	}
	after := q.Get("after")
	keys, total, err := h.src.keys(name, after, limit)
	if errors.Is(err, errNotFound) {
		http.Error(w, fmt.Sprintf("debugpage: no running informer %q", name), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, "debugpage: "+err.Error(), http.StatusInternalServerError)
		return
	}
	page := keysPage{Informer: name, Total: total, From: from, Keys: []keyRVView{}, Limit: limit, Objects: h.opts.ShowObject != nil}
	for _, k := range keys {
		page.Keys = append(page.Keys, keyRVView{Key: k.Key, ResourceVersion: k.ResourceVersion})
	}
	page.Start = template.URL("keys?" + urlValues("informer", name, "limit", strconv.Itoa(limit)))
	if len(keys) == limit && from-1+len(keys) < total {
		page.Next = keys[len(keys)-1].Key
		page.NextURL = template.URL("keys?" + urlValues("informer", name, "limit", strconv.Itoa(limit),
			"after", page.Next, "from", strconv.Itoa(from+len(keys))))
	}
	if wantsJSON(r) {
		writeJSON(w, page)
		return
	}
	writeHTML(w, keysTemplate, page)
}

// objectPage is the object view.
type objectPage struct {
	Informer string `json:"informer"`
	Key      string `json:"key"`
	Contents string `json:"contents"` // indented JSON, or why it is not shown
}

func (h *handler) serveObject(w http.ResponseWriter, r *http.Request) {
	if h.opts.ShowObject == nil {
		http.Error(w, "debugpage: object contents are not shown (the page was created without Options.ShowObject)", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	name, key := q.Get("informer"), q.Get("key")
	if name == "" || key == "" {
		http.Error(w, "debugpage: the object view needs ?informer=NAME&key=KEY", http.StatusBadRequest)
		return
	}
	obj, exists, err := h.src.object(name, key)
	switch {
	case errors.Is(err, errNotFound):
		http.Error(w, fmt.Sprintf("debugpage: no running informer %q", name), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "debugpage: "+err.Error(), http.StatusInternalServerError)
		return
	case !exists:
		http.Error(w, fmt.Sprintf("debugpage: informer %q has no object %q", name, key), http.StatusNotFound)
		return
	}
	page := objectPage{Informer: name, Key: key}
	if shown, ok := h.opts.ShowObject(name, obj); !ok {
		page.Contents = "(withheld by the page's ShowObject option)"
	} else if b, err := json.MarshalIndent(shown, "", "  "); err != nil {
		page.Contents = "(cannot be encoded as JSON: " + err.Error() + ")"
	} else {
		page.Contents = string(b)
	}
	if wantsJSON(r) {
		writeJSON(w, page)
		return
	}
	writeHTML(w, objectTemplate, page)
}

// urlValues encodes name/value pairs as a query.
func urlValues(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, "debugpage: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

func writeHTML(w http.ResponseWriter, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		http.Error(w, "debugpage: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(buf.Bytes())
}
