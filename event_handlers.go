package cache

// ResourceEventHandler is told about changes to the objects of an informer. Its methods are
// called from a single goroutine per handler, in the order the changes happened; they must not
// modify the objects they receive, which are shared with the cache and with other handlers.
//
//   - OnAdd: an object appeared. isInInitialList is true when it is part of the informer's
//     initial list (or, for a handler added to a running informer, of the objects already in
//     the cache), false when it was created later.
//   - OnUpdate: an object changed, or a resync re-delivers it unchanged (then oldObj and newObj
//     have the same resource version).
//   - OnDelete: an object is gone. obj is its last known state, or a DeletedFinalStateUnknown
//     when the deletion was only noticed by a relist.
type ResourceEventHandler interface {
	OnAdd(obj interface{}, isInInitialList bool)
	OnUpdate(oldObj, newObj interface{})
	OnDelete(obj interface{})
}

// ResourceEventHandlerFuncs is a ResourceEventHandler made of optional functions; a nil function
// ignores its notification. AddFunc does not learn isInInitialList: use
// ResourceEventHandlerDetailedFuncs for that.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

// OnAdd calls AddFunc if it is set.
func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}, _ bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj interface{}) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (r ResourceEventHandlerFuncs) OnDelete(obj interface{}) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// ResourceEventHandlerDetailedFuncs is ResourceEventHandlerFuncs whose AddFunc also receives
// isInInitialList.
type ResourceEventHandlerDetailedFuncs struct {
	AddFunc    func(obj interface{}, isInInitialList bool)
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

// OnAdd calls AddFunc if it is set.
func (r ResourceEventHandlerDetailedFuncs) OnAdd(obj interface{}, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (r ResourceEventHandlerDetailedFuncs) OnUpdate(oldObj, newObj interface{}) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (r ResourceEventHandlerDetailedFuncs) OnDelete(obj interface{}) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// FilteringResourceEventHandler passes to Handler only the notifications about objects that
// FilterFunc accepts. An update is translated by how the filter sees the two versions: both
// accepted → OnUpdate; only the new one → OnAdd(new, false); only the old one → OnDelete(old);
// neither → nothing. FilterFunc receives tombstones (DeletedFinalStateUnknown) as they are.
// Both fields are required.
type FilteringResourceEventHandler struct {
	FilterFunc func(obj interface{}) bool
	Handler    ResourceEventHandler
}

// OnAdd calls Handler.OnAdd if FilterFunc accepts obj.
func (r FilteringResourceEventHandler) OnAdd(obj interface{}, isInInitialList bool) {
	if r.FilterFunc(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate translates the update as the type's documentation describes.
func (r FilteringResourceEventHandler) OnUpdate(oldObj, newObj interface{}) {
	newer, older := r.FilterFunc(newObj), r.FilterFunc(oldObj)
	switch {
	case newer && older:
		r.Handler.OnUpdate(oldObj, newObj)
	case newer:
		r.Handler.OnAdd(newObj, false)
	case older:
		r.Handler.OnDelete(oldObj)
	}
}

// OnDelete calls Handler.OnDelete if FilterFunc accepts obj.
func (r FilteringResourceEventHandler) OnDelete(obj interface{}) {
	if r.FilterFunc(obj) {
		r.Handler.OnDelete(obj)
	}
}
