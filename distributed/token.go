package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/inferload/inferload/internal/inputfile"
)

// TokenEnv gives the collector's token to the collector and to its
// segments, as --token-file (collect) and --collector-token-file (run) do.
const TokenEnv = "INFERLOAD_COLLECTOR_TOKEN"

// ReadToken is the token in path (surrounding white space dropped), or
// env when path is "". An empty file is an error: a token that is meant
// but missing must not fall back to none.
func ReadToken(ctx context.Context, path, env string) (string, error) {
	if path == "" {
		return strings.TrimSpace(env), nil
	}
	raw, err := inputfile.Read(ctx, path, inputfile.Key)
	if err != nil {
		return "", fmt.Errorf("collector token: %w", err)
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" {
		return "", fmt.Errorf("collector token: %s is empty", path)
	}
	return tok, nil
}

// TokenFile is where `inferload collect` on loopback, given no token,
// writes the one it made, in its gathering directory, readable by its user
// only: the file its segments pass as --collector-token-file.
const TokenFile = "collector.token"

// NeedsToken says why a collector on addr must have a token: beyond
// loopback anyone who reaches the port could otherwise send a segment's
// records. "" when it need not.
func NeedsToken(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("the collector listens on %s, beyond loopback: it needs a token (--token-file, or $%s), which its segments send", addr, TokenEnv)
}

// Answers to a request without the right token.
var (
	errNoToken    = errors.New("the collector needs its token: send Authorization: Bearer TOKEN (inferload run --collector-token-file FILE, or $" + TokenEnv + ")")
	errWrongToken = errors.New("the collector's token does not match the one sent (check --collector-token-file or $" + TokenEnv + " on this segment)")
)

// WithToken returns a client whose requests carry token as a bearer
// header (client itself when token is ""). The token is never part of
// an error or a log line.
func WithToken(client *http.Client, token string) *http.Client {
	if token == "" {
		return client
	}
	c := *client
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = bearer{token: token, base: base}
	return &c
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
