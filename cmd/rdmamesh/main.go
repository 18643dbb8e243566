// Command rdmamesh validates RDMA fabrics: see `rdmamesh --help`.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
