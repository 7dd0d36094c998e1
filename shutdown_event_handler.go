package cache

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
)

// ErrShutDownFromOwnHandler is returned, wrapped, by ShutDownEventHandler when it is called from
// inside a callback of the handler it shuts down. The handler is removed all the same: nothing
// is delivered to it after the callback in progress returns. Test with errors.Is.
//
// kcache extension: client-go deadlocks in that case.
var ErrShutDownFromOwnHandler = errors.New("cache: ShutDownEventHandler called from the handler's own callback")

// ShutDownEventHandler removes the handler behind handle from informer, like RemoveEventHandler,
// and then waits until the handler has stopped: the callback in progress, if any, has returned,
// and the notifications still queued for it are dropped, never delivered. After it returns nil,
// the handler is not called again, so resources it uses can be released. It is idempotent and
// safe for concurrent use; on a stopped informer, or for a handler removed before, it returns
// once that handler's last callback has returned.
//
// Errors: whatever informer.RemoveEventHandler returns (a handle of a foreign type, for kcache's
// informers); an error, after the removal, if handle has no ShutdownChan method (it cannot be
// waited for), as in client-go.
//
// kcache extensions, where client-go blocks forever:
//   - Called from inside one of the handler's own callbacks (OnAdd, OnUpdate, OnDelete of that
//     registration, on the goroutine kcache delivers them on), it removes the handler and returns
//     an error wrapping ErrShutDownFromOwnHandler instead of waiting for itself. Work the
//     callback hands to other goroutines is not recognised as the callback: a callback that
//     waits for a goroutine that calls ShutDownEventHandler on the same handle still deadlocks.
//   - A kcache handle that is registered with a different informer than informer is left alone
//     and reported as an error, rather than waited for until that other informer stops.
func ShutDownEventHandler(informer SharedInformer, handle ResourceEventHandlerRegistration) error {
	if err := informer.RemoveEventHandler(handle); err != nil {
		return err
	}
	listener, ok := handle.(*processorListener)
	if !ok {
		s, ok := handle.(interface{ ShutdownChan() <-chan struct{} })
		if !ok {
			return fmt.Errorf("cache: registration handle %T does not support ShutdownChan()", handle)
		}
		<-s.ShutdownChan()
		return nil
	}
	if !listener.isClosed() {
		return fmt.Errorf("cache: event handler %s is registered with another informer; it was not removed", listener.handlerName)
	}
	if listener.onDeliveryGoroutine() {
		return fmt.Errorf("%w (handler %s): it was removed, and its current callback is its last", ErrShutDownFromOwnHandler, listener.handlerName)
	}
	<-listener.ShutdownChan()
	return nil
}

// currentGoroutineID returns the runtime's id of the calling goroutine, or 0 if it cannot be
// read. It parses the header line of runtime.Stack ("goroutine 42 [running]:"), whose format
// has not changed since Go 1.0; Go offers no other way to tell goroutines apart. It is called
// once when a listener starts and once per ShutDownEventHandler, never per notification.
func currentGoroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0
	}
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
