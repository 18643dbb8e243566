//go:build !verbs || !cgo

package main

const verbsBuild = "not built in (make build with libibverbs-dev)"
