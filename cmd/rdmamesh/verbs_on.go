//go:build verbs && cgo

package main

const verbsBuild = "built in"
