package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// PostInflux sends line protocol to an InfluxDB write endpoint: the full
// URL, e.g. http://127.0.0.1:8086/api/v2/write?org=o&bucket=b&precision=ns
// (2.x) or http://127.0.0.1:8086/write?db=d (1.x; ns is its default
// precision). A non-empty token is sent as "Authorization: Token …". Any
// status other than 2xx is an error carrying the start of the reply.
func PostInflux(ctx context.Context, url, token string, lines []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(lines))
	if err != nil {
		return fmt.Errorf("InfluxDB write URL %q: %w", url, err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("writing to InfluxDB: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("writing to InfluxDB: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}
