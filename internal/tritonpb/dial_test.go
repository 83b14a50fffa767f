package tritonpb

import (
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// TestDialTarget: a base URL's port, or the scheme's default one.
func TestDialTarget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ base, want string }{
		{"http://triton:8001", "passthrough:///triton:8001"},
		{"http://triton", "passthrough:///triton:80"},
		{"https://triton", "passthrough:///triton:443"},
		{"http://[::1]", "passthrough:///[::1]:80"},
	} {
		u, err := url.Parse(tt.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := DialTarget(u); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.base, got, tt.want)
		}
	}
}

// TestMetadata: headers become lower-case metadata, less those HTTP/2 and
// gRPC set themselves.
func TestMetadata(t *testing.T) {
	t.Parallel()
	h := http.Header{"Authorization": {"Bearer k"}, "X-Tenant": {"a", "b"}, "Host": {"h"},
		"Content-Type": {"x"}, "User-Agent": {"u"}, "Te": {"trailers"}, "Accept": {"*/*"}, "Connection": {"close"}}
	got := map[string][]string(Metadata(h))
	want := map[string][]string{"authorization": {"Bearer k"}, "x-tenant": {"a", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metadata %v, want %v", got, want)
	}
}
