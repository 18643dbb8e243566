package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

func newKeygenCmd() *cobra.Command {
	var dir string
	var force, ifMissing bool
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Write a random API token and gossip key (files token and gossip.key, mode 0600) for every node to share",
		Long: "keygen writes the two secrets a worker or coordinator needs before it listens beyond loopback:\n" +
			"a random bearer token (auth.token_file) and a random 32-byte gossip key in base64 (gossip.key_file).\n" +
			"Every coordinator and worker of a cluster needs the same two files.",
		Example: "  rdmamesh keygen                     # /etc/rdmamesh/token and /etc/rdmamesh/gossip.key\n" +
			"  rdmamesh keygen --dir ./secrets --force",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return keygen(dir, force, ifMissing, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", config.SecretsDir, "directory for the files (created with mode 0700 when missing)")
	f.BoolVar(&force, "force", false, "replace existing files (every node then needs the new ones)")
	f.BoolVar(&ifMissing, "if-missing", false, "keep an existing pair and exit 0 (a one-shot init container or compose service)")
	cmd.MarkFlagsMutuallyExclusive("force", "if-missing")
	return cmd
}

func keygen(dir string, force, ifMissing bool, out io.Writer) error {
	tok, key := filepath.Join(dir, config.TokenFileName), filepath.Join(dir, config.KeyFileName)
	var existing []string
	for _, p := range []string{tok, key} {
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			existing = append(existing, p)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	switch {
	case force:
	case ifMissing && len(existing) == 2:
		fmt.Fprintf(out, "keeping the existing %s and %s\n", tok, key)
		return nil
	case len(existing) > 0:
		return fmt.Errorf("refusing to overwrite %s: every node shares these files, so new ones must reach all of them; "+
			"pass --force to replace them (then copy them to every node and restart it)", strings.Join(existing, " and "))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	t, err := random(32)
	if err != nil {
		return err
	}
	k, err := random(config.KeyBytes)
	if err != nil {
		return err
	}
	// URL-safe base64 for the token: it ends up in HTTP headers and shell
	// lines, where it then needs no quoting. The key takes the standard
	// form config.DecodeGossipKey reads.
	if err := writeSecret(tok, base64.RawURLEncoding.EncodeToString(t)+"\n", force); err != nil {
		return err
	}
	if err := writeSecret(key, base64.StdEncoding.EncodeToString(k)+"\n", force); err != nil {
		return err
	}
	fmt.Fprintf(out, `wrote %[1]s and %[2]s (mode 0600)
next:
  1. copy both files unchanged to %[3]s on every coordinator and worker (they all share them), e.g.
       scp -p %[1]s %[2]s root@NODE:%[3]s/
  2. start every worker and coordinator with
       --token-file %[1]s --gossip-key-file %[2]s
     or the config keys auth.token_file and gossip.key_file (RDMAMESH_AUTH_TOKEN_FILE, RDMAMESH_GOSSIP_KEY_FILE);
     the systemd units in deploy/systemd read %[4]s/token and %[4]s/gossip.key themselves
  3. give API clients the token: rdmamesh gate --token-file %[1]s; the web UI asks for it once
  Kubernetes: kubectl -n rdmamesh create secret generic rdmamesh-secrets --from-file=gossip.key=%[2]s --from-file=api.token=%[1]s
`, tok, key, dir, config.SecretsDir)
	return nil
}

func random(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return b, nil
}

// writeSecret never leaves a partial file: without replace the file is
// created exclusively (a racing keygen cannot be overwritten), with it a
// private temporary file is renamed over the old one.
func writeSecret(path, data string, replace bool) error {
	if !replace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(data); err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
		return f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
