package debugpage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
	"github.com/kcache/cache/debugpage"
	fcache "github.com/kcache/cache/testing"
)

func fetch(t *testing.T, h http.Handler, target string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d: %s", target, rec.Code, body)
	}
	return string(body)
}

// TestProcessInformers runs real informers, one synced over 10,000 pods and one whose LIST is
// forbidden, and reads them through the page as a user would.
func TestProcessInformers(t *testing.T) {
	const n = 10000
	pods := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	for i := range n {
		pods.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%05d", i)}})
	}
	secrets := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.SecretList{} }})
	secrets.SetListError(apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", fmt.Errorf("no RBAC")))

	podInformer := cache.NewSharedIndexInformer(pods, &v1.Pod{}, 0, cache.Indexers{})
	secretInformer := cache.NewSharedIndexInformer(secrets, &v1.Secret{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { podInformer.RunWithContext(ctx) })
	wg.Go(func() { secretInformer.RunWithContext(ctx) })
	defer func() { cancel(); wg.Wait() }()
	if !cache.WaitFor(ctx, "", podInformer.HasSyncedChecker()) {
		t.Fatal("the pod informer did not sync")
	}

	h := debugpage.New(debugpage.Options{})
	var o struct {
		Informers []struct {
			Name, State, NotSyncedReason string
			Objects                      int
		}
	}
	if err := json.Unmarshal([]byte(fetch(t, h, "/debug/kcache/?format=json")), &o); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, inf := range o.Informers {
		byName[inf.Name] = i
	}
	p, okP := byName["v1.Pod"]
	s, okS := byName["v1.Secret"]
	if !okP || !okS {
		t.Fatalf("informers listed: %+v", o.Informers)
	}
	if got := o.Informers[p]; got.State != "synced" || got.Objects != n {
		t.Errorf("pods: %+v", got)
	}
	if got := o.Informers[s]; got.State != "not synced" || got.NotSyncedReason == "" {
		t.Errorf("secrets: %+v, want not synced with a reason", got)
	}
	overview := fetch(t, h, "/debug/kcache/")
	if !strings.Contains(overview, `<td class="state not-synced">not synced<div class="reason">`) {
		t.Error("the overview does not show why the secrets informer is not synced")
	}

	// The key view of 10,000 objects, page by page along the "next" links.
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	row := regexp.MustCompile(`<tr class="key">`)
	target, pages, keys := "/debug/kcache/keys?informer=v1.Pod", 0, 0
	for target != "" {
		body := fetch(t, h, target)
		pages++
		keys += len(row.FindAllStringIndex(body, -1))
		target = ""
		if m := next.FindStringSubmatch(body); m != nil {
			target = "/debug/kcache/" + html.UnescapeString(m[1])
		}
		if pages > n {
			t.Fatal("the pages do not end")
		}
	}
	if pages != n/100 || keys != n {
		t.Errorf("%d pages with %d keys, want %d and %d", pages, keys, n/100, n)
	}
}
