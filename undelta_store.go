package cache

// UndeltaStore is a Store that, after every successful Add, Update, Delete and Replace, hands
// the whole content (Store.List) to PushFunc. It suits consumers that want the complete current
// state rather than the change. Two writes in quick succession may push the same content twice,
// and pushes from concurrent writers may arrive in either order.
//
// PushFunc runs on the writer's goroutine, after the write and outside the store's lock. A nil
// PushFunc pushes nothing (client-go panics).
type UndeltaStore struct {
	Store
	PushFunc func([]interface{})
}

var _ Store = &UndeltaStore{}

// push sends the current content to PushFunc.
func (u *UndeltaStore) push() {
	if u.PushFunc != nil {
		u.PushFunc(u.Store.List())
	}
}

// Add adds obj, then pushes the content. On error nothing is pushed.
func (u *UndeltaStore) Add(obj interface{}) error {
	if err := u.Store.Add(obj); err != nil {
		return err
	}
	u.push()
	return nil
}

// Update updates obj, then pushes the content. On error nothing is pushed.
func (u *UndeltaStore) Update(obj interface{}) error {
	if err := u.Store.Update(obj); err != nil {
		return err
	}
	u.push()
	return nil
}

// Delete deletes obj, then pushes the content. On error nothing is pushed.
func (u *UndeltaStore) Delete(obj interface{}) error {
	if err := u.Store.Delete(obj); err != nil {
		return err
	}
	u.push()
	return nil
}

// Replace replaces the content, then pushes it. On error nothing is pushed.
func (u *UndeltaStore) Replace(list []interface{}, resourceVersion string) error {
	if err := u.Store.Replace(list, resourceVersion); err != nil {
		return err
	}
	u.push()
	return nil
}

// NewUndeltaStore returns an UndeltaStore over NewStore(keyFunc) that pushes to pushFunc.
func NewUndeltaStore(pushFunc func([]interface{}), keyFunc KeyFunc) *UndeltaStore {
	return &UndeltaStore{
		Store:    NewStore(keyFunc),
		PushFunc: pushFunc,
	}
}
