module github.com/kcache/cache/test/release

go 1.26.0

require golang.org/x/mod v0.43.0
