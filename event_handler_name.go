package cache

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// nameForHandler returns a name for handler for logs, traces and sync tracker names:
//
//   - ResourceEventHandlerFuncs (value or pointer): the package or receiver that all its set
//     functions share ("example.com/ctrl.(*Controller)"), or, when they differ, the full
//     function names joined with "+". kcache treats ResourceEventHandlerDetailedFuncs the same
//     way (client-go names it by its type only).
//   - any other handler: the package path and name of its type, through one pointer
//     ("example.com/ctrl.podHandler").
//   - a typed handler registered with AddTypedEventHandler: the name of the user's typed
//     handler by the same rules (TypedResourceEventHandlerFuncs and
//     TypedResourceEventHandlerDetailedFuncs by their functions), never the adapter's type;
//     client-go names the adapter.
//   - when that yields nothing (an unnamed type, all functions nil): the %T form.
func nameForHandler(handler ResourceEventHandler) string {
	name := ""
	switch h := handler.(type) {
	case nil:
	case wrappedEventHandler:
		name = h.wrappedHandlerName()
	case ResourceEventHandlerFuncs:
		name = commonFuncName(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case *ResourceEventHandlerFuncs:
		if h != nil {
			name = commonFuncName(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
		}
	case ResourceEventHandlerDetailedFuncs:
		name = commonFuncName(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case *ResourceEventHandlerDetailedFuncs:
		if h != nil {
			name = commonFuncName(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
		}
	default:
		name = typeName(reflect.TypeOf(handler))
	}
	if name == "" {
		name = fmt.Sprintf("%T", handler)
	}
	return name
}

// typeName returns "pkgpath.Name" for t, looking through one pointer; "" for unnamed types.
func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return ""
	}
	if t.PkgPath() == "" {
		return t.Name()
	}
	return t.PkgPath() + "." + t.Name()
}

// commonFuncName names a set of functions: their shared qualifier (everything before the last
// dot of the runtime name) if they all have the same one, otherwise their names joined with
// "+". Nil functions are skipped; "" if none is set.
func commonFuncName(funcs ...interface{}) string {
	var names []string
	qualifier, shared := "", true
	for _, f := range funcs {
		v := reflect.ValueOf(f)
		if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
			continue
		}
		fn := runtime.FuncForPC(v.Pointer())
		if fn == nil {
			continue
		}
		name := fn.Name()
		names = append(names, name)
		q := name
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			q = name[:i]
		}
		if len(names) == 1 {
			qualifier = q
		} else if q != qualifier {
			shared = false
		}
	}
	if shared {
		return qualifier
	}
	return strings.Join(names, "+")
}
