package priorityqueue_test

import (
	"fmt"
	"strings"
	"testing"

	crpq "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/kcache/cache/workqueue/priorityqueue"
)

// TestReAddOrderMatchesControllerRuntime runs scripts in which items are added again while a
// worker holds them on both queues and compares the order in which they hand items out.
// Steps: "+key" or "+key@prio" adds, "<key" gets (and expects key), ">key" is Done. After the
// script both queues are drained, each item Done at once. (No delays: controller-runtime's
// queue reads the real clock.)
func TestReAddOrderMatchesControllerRuntime(t *testing.T) {
	scripts := []string{
		"+foo <foo +foo +bar <bar +baz >foo",
		"+a +b <a +c +a +d >a",
		"+a <a +a@5 +hi@9 +x@5 +lo >a",
		"+a <a +a +b@5 +a@5 +c@5 >a",
		"+a <a +a@5 +b@5 +a@1 >a",
		"+a +b <a <b +b +a +c >a >b",
		"+a <a +a +b <b +b >b >a",
		"+a@1 +b +c <a +c@1 +a +b@1 +d@1 >a",
	}
	type ops struct {
		add  func(key string, prio int)
		get  func() (string, int)
		done func(key string)
		len  func() int
		stop func()
	}
	kcache := func() ops {
		q := priorityqueue.New[string]("")
		return ops{
			func(k string, p int) { q.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, k) },
			func() (string, int) { k, p, _ := q.GetWithPriority(); return k, p },
			q.Done, q.Len, q.ShutDown,
		}
	}
	cr := func() ops {
		q := crpq.New[string]("")
		return ops{
			func(k string, p int) { q.AddWithOpts(crpq.AddOpts{Priority: &p}, k) },
			func() (string, int) { k, p, _ := q.GetWithPriority(); return k, p },
			q.Done, q.Len, q.ShutDown,
		}
	}
	run := func(q ops, script string) string {
		defer q.stop()
		var out []string
		for _, step := range strings.Fields(script) {
			key, prio := step[1:], 0
			if i := strings.IndexByte(key, '@'); i >= 0 {
				fmt.Sscan(key[i+1:], &prio)
				key = key[:i]
			}
			switch step[0] {
			case '+':
				q.add(key, prio)
			case '<':
				if got, _ := q.get(); got != key {
					return fmt.Sprintf("got %s at %s", got, step)
				}
			case '>':
				q.done(key)
			}
		}
		for q.len() > 0 {
			k, p := q.get()
			out = append(out, fmt.Sprintf("%s@%d", k, p))
			q.done(k)
		}
		return strings.Join(out, " ")
	}
	for _, s := range scripts {
		t.Run(s, func(t *testing.T) {
			if k, c := run(kcache(), s), run(cr(), s); k != c {
				t.Fatalf("kcache hands out %q, controller-runtime %q", k, c)
			}
		})
	}
}
