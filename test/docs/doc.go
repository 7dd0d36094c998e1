// Package docs holds no code: its test compiles the Go blocks of the repository's
// documents (README.md, MIGRATING.md, SHARDING.md, MEMORY.md), so that every snippet a user copies
// builds as written. See snippets_test.go for the rules a block follows.
package docs
