package compat

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// packagePairs maps each client-go package to its kcache counterpart.
var packagePairs = []struct{ clientGo, kcache string }{
	{"k8s.io/client-go/tools/cache", "github.com/kcache/cache"},
	{"k8s.io/client-go/tools/cache/synctrack", "github.com/kcache/cache/synctrack"},
	{"k8s.io/client-go/util/workqueue", "github.com/kcache/cache/workqueue"},
	{"k8s.io/client-go/tools/pager", "github.com/kcache/cache/pager"},
	{"k8s.io/client-go/listers", "github.com/kcache/cache/listers"},
}

// outOfScope lists the client-go identifiers kcache deliberately leaves out: they need
// client-go's REST client (DESIGN.md, "Compatibility contract").
var outOfScope = map[string]bool{
	"k8s.io/client-go/tools/cache.NewListWatchFromClient":         true,
	"k8s.io/client-go/tools/cache.NewFilteredListWatchFromClient": true,
	"k8s.io/client-go/tools/cache.Getter":                         true,
}

func TestAPICompatibility(t *testing.T) {
	var paths []string
	for _, p := range packagePairs {
		paths = append(paths, p.clientGo, p.kcache)
	}
	loaded, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, paths...)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*types.Package{}
	for _, p := range loaded {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		byPath[p.PkgPath] = p.Types
	}
	f := formatter{rename: map[string]string{}}
	for _, p := range packagePairs {
		f.rename[p.clientGo] = p.kcache
	}
	for _, p := range packagePairs {
		t.Run(p.kcache, func(t *testing.T) {
			compareScopes(t, f, byPath[p.clientGo], byPath[p.kcache])
		})
	}
}

func compareScopes(t *testing.T, f formatter, want, got *types.Package) {
	for _, name := range want.Scope().Names() {
		w := want.Scope().Lookup(name)
		if !w.Exported() || outOfScope[want.Path()+"."+name] {
			continue
		}
		g := got.Scope().Lookup(name)
		if g == nil {
			t.Errorf("missing %s %s", kind(w), name)
			continue
		}
		if kind(w) != kind(g) {
			t.Errorf("%s: client-go has a %s, kcache a %s", name, kind(w), kind(g))
			continue
		}
		switch w := w.(type) {
		case *types.TypeName:
			compareTypes(t, f, name, w, g.(*types.TypeName))
		case *types.Const:
			gc := g.(*types.Const)
			if f.typ(w.Type()) != f.typ(gc.Type()) || !constant.Compare(w.Val(), token.EQL, gc.Val()) {
				t.Errorf("const %s: client-go %s = %s, kcache %s = %s", name, f.typ(w.Type()), w.Val(), f.typ(gc.Type()), gc.Val())
			}
		default:
			if a, b := f.typ(w.Type()), f.typ(g.Type()); a != b {
				t.Errorf("%s %s:\n client-go: %s\n kcache:    %s", kind(w), name, a, b)
			}
		}
	}
}

func compareTypes(t *testing.T, f formatter, name string, want, got *types.TypeName) {
	if want.IsAlias() != got.IsAlias() {
		t.Errorf("type %s: alias in one package only (client-go alias=%v)", name, want.IsAlias())
	}
	wt, gt := types.Unalias(want.Type()), types.Unalias(got.Type())
	if a, b := typeParams(f, wt), typeParams(f, gt); a != b {
		t.Errorf("type %s: type parameters differ: client-go %s, kcache %s", name, a, b)
	}
	switch wu := wt.Underlying().(type) {
	case *types.Struct:
		gu, ok := gt.Underlying().(*types.Struct)
		if !ok {
			t.Errorf("type %s: client-go's is a struct, kcache's is %s", name, f.typ(gt.Underlying()))
			break
		}
		gotFields := map[string]string{}
		for i := 0; i < gu.NumFields(); i++ {
			fld := gu.Field(i)
			gotFields[fld.Name()] = fieldString(f, fld)
		}
		for i := 0; i < wu.NumFields(); i++ {
			fld := wu.Field(i)
			if !fld.Exported() {
				continue
			}
			if g, ok := gotFields[fld.Name()]; !ok {
				t.Errorf("type %s: missing field %s", name, fieldString(f, fld))
			} else if g != fieldString(f, fld) {
				t.Errorf("type %s: field client-go %s, kcache %s", name, fieldString(f, fld), g)
			}
		}
	case *types.Interface:
		if a, b := f.typ(wu), f.typ(gt.Underlying()); a != b {
			t.Errorf("interface %s:\n client-go: %s\n kcache:    %s", name, a, b)
		}
	default:
		if a, b := f.typ(wu), f.typ(gt.Underlying()); a != b {
			t.Errorf("type %s: client-go %s, kcache %s", name, a, b)
		}
	}
	// Methods: whatever client-go's T and *T have, kcache's must have with the same signature.
	for _, ptr := range []bool{false, true} {
		var wm, gm *types.MethodSet
		if ptr {
			wm, gm = types.NewMethodSet(types.NewPointer(wt)), types.NewMethodSet(types.NewPointer(gt))
		} else {
			wm, gm = types.NewMethodSet(wt), types.NewMethodSet(gt)
		}
		for i := 0; i < wm.Len(); i++ {
			m := wm.At(i).Obj()
			if !m.Exported() {
				continue
			}
			sel := gm.Lookup(got.Pkg(), m.Name())
			if sel == nil {
				sel = gm.Lookup(nil, m.Name())
			}
			recv := name
			if ptr {
				recv = "*" + name
			}
			if sel == nil {
				t.Errorf("method (%s).%s missing", recv, m.Name())
				continue
			}
			if a, b := f.typ(m.Type()), f.typ(sel.Obj().Type()); a != b {
				t.Errorf("method (%s).%s:\n client-go: %s\n kcache:    %s", recv, m.Name(), a, b)
			}
		}
	}
}

func kind(o types.Object) string {
	switch o.(type) {
	case *types.TypeName:
		return "type"
	case *types.Func:
		return "func"
	case *types.Var:
		return "var"
	case *types.Const:
		return "const"
	}
	return fmt.Sprintf("%T", o)
}

func typeParams(f formatter, t types.Type) string {
	n, ok := t.(*types.Named)
	if !ok || n.TypeParams().Len() == 0 {
		return ""
	}
	var parts []string
	for i := 0; i < n.TypeParams().Len(); i++ {
		parts = append(parts, f.typ(n.TypeParams().At(i).Constraint()))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func fieldString(f formatter, v *types.Var) string {
	if v.Embedded() {
		return "embedded " + f.typ(v.Type())
	}
	return v.Name() + " " + f.typ(v.Type())
}

// formatter prints types with client-go's package paths renamed to kcache's, aliases resolved,
// parameter names dropped and type parameters numbered, so that identical APIs print alike.
type formatter struct {
	rename map[string]string
}

func (f formatter) pkg(p *types.Package) string {
	if p == nil {
		return ""
	}
	if r, ok := f.rename[p.Path()]; ok {
		return r
	}
	return p.Path()
}

func (f formatter) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Alias:
		return f.typ(types.Unalias(t))
	case *types.Basic:
		return t.Name()
	case *types.Pointer:
		return "*" + f.typ(t.Elem())
	case *types.Slice:
		return "[]" + f.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), f.typ(t.Elem()))
	case *types.Map:
		return "map[" + f.typ(t.Key()) + "]" + f.typ(t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + f.typ(t.Elem())
		case types.RecvOnly:
			return "<-chan " + f.typ(t.Elem())
		}
		return "chan " + f.typ(t.Elem())
	case *types.TypeParam:
		return fmt.Sprintf("$%d", t.Index())
	case *types.Named:
		s := t.Obj().Name()
		if p := f.pkg(t.Obj().Pkg()); p != "" {
			s = p + "." + s
		}
		if args := t.TypeArgs(); args.Len() > 0 {
			var parts []string
			for i := 0; i < args.Len(); i++ {
				parts = append(parts, f.typ(args.At(i)))
			}
			s += "[" + strings.Join(parts, ", ") + "]"
		}
		return s
	case *types.Signature:
		return "func" + f.tuple(t.Params(), t.Variadic()) + " " + f.tuple(t.Results(), false)
	case *types.Interface:
		var parts []string
		for i := 0; i < t.NumExplicitMethods(); i++ {
			m := t.ExplicitMethod(i)
			parts = append(parts, m.Name()+strings.TrimPrefix(f.typ(m.Type()), "func"))
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			parts = append(parts, f.typ(t.EmbeddedType(i)))
		}
		sort.Strings(parts)
		return "interface{" + strings.Join(parts, "; ") + "}"
	case *types.Union:
		var parts []string
		for i := 0; i < t.Len(); i++ {
			term := t.Term(i)
			s := f.typ(term.Type())
			if term.Tilde() {
				s = "~" + s
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, "|")
	case *types.Struct:
		var parts []string
		for i := 0; i < t.NumFields(); i++ {
			parts = append(parts, fieldString(f, t.Field(i)))
		}
		return "struct{" + strings.Join(parts, "; ") + "}"
	case *types.Tuple:
		return f.tuple(t, false)
	}
	return t.String()
}

func (f formatter) tuple(t *types.Tuple, variadic bool) string {
	var parts []string
	for i := 0; i < t.Len(); i++ {
		s := f.typ(t.At(i).Type())
		if variadic && i == t.Len()-1 {
			s = "..." + strings.TrimPrefix(s, "[]")
		}
		parts = append(parts, s)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
