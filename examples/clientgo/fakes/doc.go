// Package fakes holds tests of kcache's informer factory over client-go's fake clientsets:
// every kind of fake syncs without extra options. It has no code of its own.
package fakes
