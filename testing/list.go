package testing

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// The messages a real API server gives for compacted list requests.
const (
	listExpiredMsg          = "The resourceVersion for the provided list is too old."
	inconsistentContinueMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
		"list - objects that were created, modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// List returns the objects as a list object; it is ListWithContext without a context.
func (f *FakeControllerSource) List(options metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), options)
}

// ListWithContext returns the stored objects that match options' selectors, deep-copied and
// sorted by namespace, name and UID, in a list object (Options.NewListFunc) whose
// ResourceVersion is the version the objects were read at. options are interpreted as a real
// API server does:
//
//   - ResourceVersion "" (a consistent read) and "0" (any version) read the current state.
//     At "0", Limit is ignored (see Options.PaginateResourceVersionZero).
//   - ResourceVersion N with ResourceVersionMatch Exact reads the state at N; NotOlderThan
//     reads the current state. Without a match, N means Exact when Limit is set and
//     NotOlderThan otherwise. N above the current version fails at once with the server's
//     "Too large resource version" Timeout error (cause ResourceVersionTooLarge); an exact N
//     that was compacted fails with 410 Expired.
//   - Limit > 0 returns at most Limit objects and, when more keys follow, a continue token
//     and (without selectors) RemainingItemCount. Continue pages read the same version as the
//     first page. A token whose version was compacted fails with 410 Expired carrying a new
//     token that continues at the current version (an inconsistent continue), as etcd does.
//     A continue request with a ResourceVersion other than "" or "0" is a BadRequest.
//   - Invalid combinations (for example ResourceVersionMatch without ResourceVersion, or
//     SendInitialEvents) fail with the server's Invalid error; malformed selectors, versions
//     and tokens with BadRequest.
//
// Before that, the call is recorded (Requests), the RequestHook runs, and a failure
// scheduled with FailLists, then ListError, then ErrShutdown after Shutdown, is returned.
func (f *FakeControllerSource) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	if err := f.beginRequest(ctx, VerbList, options); err != nil {
		return nil, err
	}
	if err := validateList(options); err != nil {
		return nil, err
	}
	pred, err := parsePredicate(options, f.opts.FieldsFunc != nil)
	if err != nil {
		return nil, err
	}
	var tok *continueToken
	if options.Continue != "" {
		if options.ResourceVersion != "" && options.ResourceVersion != "0" {
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		if tok, err = decodeContinue(options.Continue); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
	}
	rv, hasRV, err := parseResourceVersion(options.ResourceVersion)
	if err != nil {
		return nil, err
	}
	list, err := f.newList()
	if err != nil {
		return nil, err
	}

	f.mu.Lock()
	p, readRV, err := f.readLocked(options, tok, rv, hasRV, pred)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}

	if err := meta.SetList(list, deepCopyAll(p.objs)); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("testing: cannot fill %T: %w", list, err))
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("testing: %T is not a list: %w", list, err))
	}
	lm.SetResourceVersion(strconv.Itoa(readRV))
	lm.SetContinue("")
	lm.SetRemainingItemCount(nil)
	if p.last != nil {
		lm.SetContinue(encodeContinue(continueToken{RV: int64(readRV), Key: *p.last}))
		if pred.empty() {
			remaining := p.remaining
			lm.SetRemainingItemCount(&remaining)
		}
	}
	return list, nil
}

// readLocked works out which version a list reads and reads one page of it.
func (f *FakeControllerSource) readLocked(options metav1.ListOptions, tok *continueToken, rv int, hasRV bool, pred predicate) (page, int, error) {
	h := &f.hist
	limit := options.Limit
	if tok != nil {
		readRV := int(tok.RV)
		switch {
		case tok.RV < 0:
			readRV = h.lastRV
		case readRV > h.lastRV:
			return page{}, 0, apierrors.NewBadRequest("invalid continue token: it names a future resource version")
		case !h.retained(readRV):
			err := apierrors.NewResourceExpired(inconsistentContinueMsg)
			err.ErrStatus.ListMeta.Continue = encodeContinue(continueToken{RV: -1, Key: tok.Key})
			return page{}, 0, err
		}
		return h.listPage(readRV, &tok.Key, limit, pred), readRV, nil
	}
	if !hasRV {
		if options.ResourceVersion == "0" && !f.opts.PaginateResourceVersionZero {
			limit = 0
		}
		return h.listPage(h.lastRV, nil, limit, pred), h.lastRV, nil
	}
	if rv > h.lastRV {
		return page{}, 0, tooLargeError(rv, h.lastRV)
	}
	match := options.ResourceVersionMatch
	if match == "" {
		match = metav1.ResourceVersionMatchNotOlderThan
		if limit > 0 {
			match = metav1.ResourceVersionMatchExact
		}
	}
	if match == metav1.ResourceVersionMatchNotOlderThan {
		return h.listPage(h.lastRV, nil, limit, pred), h.lastRV, nil
	}
	if !h.retained(rv) {
		return page{}, 0, apierrors.NewResourceExpired(listExpiredMsg)
	}
	return h.listPage(rv, nil, limit, pred), rv, nil
}

// newList returns an empty list from Options.NewListFunc. It may call user code, so it must
// not run under the source's lock.
func (f *FakeControllerSource) newList() (runtime.Object, error) {
	if f.opts.NewListFunc == nil {
		return &metav1.List{}, nil
	}
	list := f.opts.NewListFunc()
	if isNil(list) {
		return nil, apierrors.NewInternalError(errors.New("testing: Options.NewListFunc returned nil"))
	}
	return list, nil
}

// parseResourceVersion parses a request's resource version; hasRV is false for "" and "0",
// which name no particular version.
func parseResourceVersion(s string) (rv int, hasRV bool, err error) {
	if s == "" || s == "0" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(s, 10, 62)
	if err != nil {
		return 0, false, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q is not a non-negative integer", s))
	}
	return int(n), true, nil
}

// tooLargeError is the error a real server gives for a resource version it has not reached:
// a Timeout carrying the ResourceVersionTooLarge cause, retry after one second.
func tooLargeError(requested, current int) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// continueToken is the state a continue token carries: the version the list reads (-1 for
// "the current one") and the key of the last object returned.
type continueToken struct {
	RV  int64
	Key objKey
}

// tokenJSON is the encoded form of a continueToken.
type tokenJSON struct {
	RV        int64  `json:"rv"`
	Namespace string `json:"ns,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

func encodeContinue(t continueToken) string {
	data, _ := json.Marshal(tokenJSON{RV: t.RV, Namespace: t.Key.namespace, Name: t.Key.name, UID: string(t.Key.uid)})
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeContinue(s string) (*continueToken, error) {
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var t tokenJSON
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	if t.RV == 0 || t.RV < -1 {
		return nil, fmt.Errorf("bad resource version %d", t.RV)
	}
	return &continueToken{RV: t.RV, Key: objKey{namespace: t.Namespace, name: t.Name, uid: types.UID(t.UID)}}, nil
}

// deepCopyAll returns deep copies of objs.
func deepCopyAll(objs []runtime.Object) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopyObject()
	}
	return out
}
