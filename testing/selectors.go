package testing

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The field names every object supports in a field selector.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// DefaultFields returns the fields of obj that a field selector can match when
// Options.FieldsFunc is not set: metadata.name and metadata.namespace.
func DefaultFields(obj metav1.Object) fields.Set {
	return fields.Set{fieldName: obj.GetName(), fieldNamespace: obj.GetNamespace()}
}

// predicate is a parsed label and field selector. The zero value matches everything.
type predicate struct {
	label labels.Selector
	field fields.Selector
}

func (p predicate) empty() bool {
	return (p.label == nil || p.label.Empty()) && (p.field == nil || p.field.Empty())
}

func (p predicate) matches(a attrs) bool {
	if p.label != nil && !p.label.Empty() && !p.label.Matches(a.labels) {
		return false
	}
	if p.field != nil && !p.field.Empty() && !p.field.Matches(a.fields) {
		return false
	}
	return true
}

// parsePredicate parses the selectors of options. A selector that does not parse, or (with
// the default fields) names a field other than metadata.name and metadata.namespace, is a
// BadRequest, as on a real API server.
func parsePredicate(options metav1.ListOptions, customFields bool) (predicate, error) {
	var p predicate
	if options.LabelSelector != "" {
		sel, err := labels.Parse(options.LabelSelector)
		if err != nil {
			return p, apierrors.NewBadRequest(err.Error())
		}
		p.label = sel
	}
	if options.FieldSelector != "" {
		sel, err := fields.ParseSelector(options.FieldSelector)
		if err != nil {
			return p, apierrors.NewBadRequest(err.Error())
		}
		if !customFields {
			for _, r := range sel.Requirements() {
				if r.Field != fieldName && r.Field != fieldNamespace {
					return p, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
				}
			}
		}
		p.field = sel
	}
	return p, nil
}

// computeAttrs returns the labels and fields of obj. It calls fieldsFn, so it must not run
// under the source's lock.
func computeAttrs(obj runtime.Object, m metav1.Object, fieldsFn func(runtime.Object) fields.Set) attrs {
	a := attrs{labels: labels.Set(m.GetLabels())}
	if fieldsFn != nil {
		a.fields = fieldsFn(obj)
	} else {
		a.fields = DefaultFields(m)
	}
	return a
}

// listOptionsKind is the kind a real API server names in its Invalid errors for list options.
var listOptionsKind = schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}

// validateList applies the API server's rules for the options of a LIST request.
func validateList(options metav1.ListOptions) error {
	var errs field.ErrorList
	if match := options.ResourceVersionMatch; match != "" {
		path := field.NewPath("resourceVersionMatch")
		if options.ResourceVersion == "" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if options.Continue != "" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if match != metav1.ResourceVersionMatchExact && match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.NotSupported(path, match, []string{
				string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
		}
		if match == metav1.ResourceVersionMatchExact && options.ResourceVersion == "0" {
			errs = append(errs, field.Forbidden(path, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if options.SendInitialEvents != nil {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	return nil
}

// validateWatch applies the API server's rules for the options of a WATCH request.
// watchList reports whether the source serves streaming lists (SendInitialEvents).
func validateWatch(options metav1.ListOptions, watchList bool) error {
	var errs field.ErrorList
	match := options.ResourceVersionMatch
	path := field.NewPath("resourceVersionMatch")
	if options.SendInitialEvents != nil {
		if match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("sendInitialEvents requires setting resourceVersionMatch to %s", metav1.ResourceVersionMatchNotOlderThan)))
		}
		if !watchList {
			errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
		}
	}
	if match != "" {
		if options.SendInitialEvents == nil {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.NotSupported(path, match, []string{string(metav1.ResourceVersionMatchNotOlderThan)}))
		}
		if options.Continue != "" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden when continue is provided"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	return nil
}
