package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Where `rdmamesh keygen` writes by default, and the names it gives the
// files; the example configs and the systemd units read them from there.
const (
	SecretsDir    = "/etc/rdmamesh"
	TokenFileName = "token"
	KeyFileName   = "gossip.key"
	KeyBytes      = 32 // AES-256
)

// Secrets reads the API token and the gossip key from their values or files.
// Errors name the key but never echo a secret.
func (c *Config) Secrets() (token string, gossipKey []byte, err error) {
	token, err = c.token()
	if err != nil {
		return "", nil, err
	}
	key, err := c.gossipKey()
	if err != nil {
		return "", nil, err
	}
	return token, key, nil
}

func (c *Config) token() (string, error) {
	return readSecret("auth.token", c.Auth.Token, "auth.token_file", c.Auth.TokenFile)
}

func (c *Config) gossipKey() ([]byte, error) {
	raw, err := readSecret("gossip.key", c.Gossip.Key, "gossip.key_file", c.Gossip.KeyFile)
	if err != nil || raw == "" {
		return nil, err
	}
	return DecodeGossipKey(raw)
}

// DecodeGossipKey reads the base64 form every member shares.
func DecodeGossipKey(raw string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil {
		return nil, &FieldError{Key: "gossip.key", Msg: "is not base64; make one with: rdmamesh keygen"}
	}
	if n := len(key); n != 16 && n != 24 && n != 32 {
		return nil, &FieldError{Key: "gossip.key", Msg: fmt.Sprintf("decodes to %d bytes; want 16, 24 or 32 (make one with: rdmamesh keygen)", n)}
	}
	return key, nil
}

func readSecret(key, val, fileKey, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(val), nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &FieldError{Key: fileKey, Err: err,
			Msg: fmt.Sprintf("%s does not exist; create the token and gossip key with: rdmamesh keygen (then copy both files to every node)", file)}
	}
	if err != nil {
		return "", &FieldError{Key: fileKey, Msg: err.Error(), Err: err}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", &FieldError{Key: fileKey, Msg: fmt.Sprintf("%s is empty", file)}
	}
	return s, nil
}
