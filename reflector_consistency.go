package cache

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/klog/v2"
)

// watchListConsistencyCheckEnabled is read once from KUBE_WATCHLIST_INCONSISTENCY_DETECTOR (any
// value strconv.ParseBool accepts as true). Tests set it directly.
var watchListConsistencyCheckEnabled, _ = strconv.ParseBool(os.Getenv("KUBE_WATCHLIST_INCONSISTENCY_DETECTOR"))

// consistencyListRetryInterval is how often the consistency check retries a failed LIST.
const consistencyListRetryInterval = time.Second

// checkWatchListConsistencyIfRequested is the watch-list data consistency detector, a test aid
// for CI (off unless KUBE_WATCHLIST_INCONSISTENCY_DETECTOR is true). After a watch-list it LISTs
// at exactly the watch-list's resource version (retrying every second until the LIST succeeds
// or ctx is cancelled), transforms the listed objects like the streamed ones, and compares the
// two sets, sorted by UID.
//
// On a difference it logs both and panics, as client-go does: the detector exists to stop a
// test run at the first inconsistency. Streamed or listed objects without metadata also make
// it panic.
func (r *Reflector) checkWatchListConsistencyIfRequested(ctx context.Context, resourceVersion string, transform TransformFunc, streamed []interface{}) {
	if !watchListConsistencyCheckEnabled {
		return
	}
	logger := klog.FromContext(ctx)
	if resourceVersion == "0" {
		// An Exact list at "0" is invalid.
		logger.V(4).Info("Data consistency check is enabled but the resource version does not allow an exact LIST; skipping it", "reflector", r.name)
		return
	}
	logger.Info("Warning: data consistency check is enabled, this will result in an additional call to the API server", "reflector", r.name)

	options := metav1.ListOptions{ResourceVersion: resourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	var listed []interface{}
	for {
		list, err := r.listerWatcher.ListWithContext(ctx, options)
		if err == nil && list == nil {
			err = errNilList
		}
		if err == nil {
			objs, xerr := meta.ExtractListWithAlloc(list)
			if xerr != nil {
				panic(fmt.Sprintf("data consistency check for %s: cannot read the list: %v", r.name, xerr))
			}
			listed = make([]interface{}, len(objs))
			for i, o := range objs {
				listed[i] = o
			}
			break
		}
		logger.Error(err, "Failed to list data from the server, retrying until the context is cancelled", "reflector", r.name)
		if !r.sleep(ctx, consistencyListRetryInterval) {
			logger.Error(ctx.Err(), "Data consistency check not performed: the context was cancelled", "reflector", r.name)
			return
		}
	}
	if transform != nil {
		for i := range listed {
			obj, err := transform(listed[i])
			if err != nil {
				panic(fmt.Sprintf("data consistency check for %s: transform failed: %v", r.name, err))
			}
			listed[i] = obj
		}
	}

	want, got := metaObjectsByUID(r.name, listed), metaObjectsByUID(r.name, streamed)
	if !reflect.DeepEqual(want, got) {
		logger.Info("Data received by the watch-list differs from a LIST at the same resource version", "reflector", r.name, "diff", diff.Diff(want, got))
		panic(fmt.Sprintf("data inconsistency detected for %s, panicking!", r.name))
	}
}

// metaObjectsByUID returns the metadata accessors of objs sorted by UID.
func metaObjectsByUID(name string, objs []interface{}) []metav1.Object {
	out := make([]metav1.Object, len(objs))
	for i, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			panic(fmt.Sprintf("data consistency check for %s: %v", name, err))
		}
		out[i] = m
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetUID() < out[j].GetUID() })
	return out
}
