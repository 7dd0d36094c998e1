// Package compat checks that kcache's public API is source-compatible with client-go v0.37.2:
// every exported identifier of client-go's tools/cache, tools/cache/synctrack, util/workqueue,
// tools/pager and the root of listers (the generic helpers) exists in the matching kcache
// package with the same kind, type, signature, method set and exported struct fields. It is its
// own module so that the root module never depends on client-go. Run it with `make compat`.
package compat
