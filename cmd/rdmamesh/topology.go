package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/topology"
)

// loadTopology reads coordinator.topology; "" is none. A file that does
// not parse stops the command before it serves anything: a coordinator
// localizing on half a fabric would name the wrong cables.
func loadTopology(path string) (*topology.Topology, error) {
	if path == "" {
		return nil, nil
	}
	t, err := topology.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("coordinator.topology: %w", err)
	}
	return t, nil
}

func newTopologyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "Fabric topologies: generate a rail-optimized fat tree as a cabling plan",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newTopologyGenerateCmd())
	return cmd
}

func newTopologyGenerateCmd() *cobra.Command {
	var spec, out string
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write a rail-optimized 2- or 3-tier fat tree as a YAML cabling plan",
		Example: "  rdmamesh topology generate --fat-tree nodes=512,rails=8,leaf=32,spines=16 -o plan.yaml\n" +
			"  rdmamesh topology generate --fat-tree nodes=4096,rails=8,leaf=32,spines=16,pods=8,cores=16,ll=ib",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := fatTree(spec)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				return t.WritePlan(cmd.OutOrStdout())
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := t.WritePlan(f); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %d switches, %d HCAs, %d cables\n", out, len(t.Switches), len(t.HCAs), len(t.Cables))
			return nil
		},
	}
	cmd.Flags().StringVar(&spec, "fat-tree", "", "nodes=N,rails=R,leaf=NODES_PER_LEAF,spines=S[,pods=P,cores=C][,oversub=X][,prefix=node-][,devices=mlx5_][,ll=roce|ib]")
	cmd.Flags().StringVarP(&out, "output", "o", "-", "file to write (- = stdout)")
	return cmd
}

// fatTree parses and builds a --fat-tree spec; a bad one is a usage error.
func fatTree(spec string) (*topology.Topology, error) {
	if spec == "" {
		return nil, fmt.Errorf("--fat-tree is required, e.g. nodes=64,rails=2,leaf=8,spines=4")
	}
	ft, err := topology.ParseFatTree(spec)
	if err != nil {
		return nil, fmt.Errorf("--fat-tree: %w", err)
	}
	t, err := ft.Generate()
	if err != nil {
		return nil, fmt.Errorf("--fat-tree: %w", err)
	}
	return t, nil
}
