// Package compat checks that kcache's public API is source-compatible with client-go v0.36.3:
// every exported identifier of client-go's tools/cache, tools/cache/synctrack, util/workqueue and
// tools/pager exists in the matching kcache package with the same kind, type, signature, method
// set and exported struct fields. It is its own module so that the root module never depends on
// client-go. Run it with `make compat`.
package compat
