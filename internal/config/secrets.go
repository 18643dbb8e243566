package config

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// Secrets reads the API token and the gossip key from their values or files.
// Errors name the key but never echo a secret.
func (c *Config) Secrets() (token string, gossipKey []byte, err error) {
	token, err = readSecret("auth.token", c.Auth.Token, "auth.token_file", c.Auth.TokenFile)
	if err != nil {
		return "", nil, err
	}
	raw, err := readSecret("gossip.key", c.Gossip.Key, "gossip.key_file", c.Gossip.KeyFile)
	if err != nil || raw == "" {
		return token, nil, err
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return "", nil, &FieldError{Key: "gossip.key", Msg: "is not base64; make one with: head -c 32 /dev/urandom | base64"}
	}
	if n := len(key); n != 16 && n != 24 && n != 32 {
		return "", nil, &FieldError{Key: "gossip.key", Msg: fmt.Sprintf("decodes to %d bytes; want 16, 24 or 32 (head -c 32 /dev/urandom | base64)", n)}
	}
	return token, key, nil
}

func readSecret(key, val, fileKey, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(val), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &FieldError{Key: fileKey, Msg: err.Error()}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", &FieldError{Key: fileKey, Msg: fmt.Sprintf("%s is empty", file)}
	}
	return s, nil
}
