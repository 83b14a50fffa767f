// Package httpguard is the one guard in front of every HTTP surface
// inferload serves while it runs: the live UI (`run --ui`, `collect
// --ui`), the launcher of `inferload ui` and the distributed run's
// collector. Each surface states its Policy; the checks are the same
// code for all three:
//
//   - a token, when the policy has one, on every request (a bearer
//     header; for a page also the printed URL's ?token= once, which sets
//     an HttpOnly, SameSite=Strict cookie and beats a stale one),
//     compared in constant time; with OpenReads, reads go without it on
//     a loopback Host, and the handler learns they are Locked;
//   - without a token, a Host header naming a loopback address only, so
//     a DNS-rebinding page (its own host name, resolved to 127.0.0.1)
//     reaches nothing;
//   - on every request that can change state (any method but GET, HEAD
//     and OPTIONS), no cross-origin browser request (Sec-Fetch-Site, or
//     an Origin that is not this server: net/http's
//     CrossOriginProtection), so no form or script on another site can
//     stop, steer or feed a run;
//   - a body only of the policy's media types (parsed, so
//     "application/json; charset=utf-8" is JSON), which a cross-site
//     form cannot send;
//   - a body of at most the policy's size, refused with 413 before it is
//     read when its length is declared, and cut off at the limit when
//     it is not.
//
// Every answer forbids framing, sniffing, caching and referrers.
package httpguard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
)

// DefaultMaxBody bounds a request body when the policy sets no bound: a
// JSON control request is a few bytes.
const DefaultMaxBody = 64 << 10

// JSON is the media type of the pages' and scripts' request bodies.
const JSON = "application/json"

// Policy is one surface's guard.
type Policy struct {
	// Token, when set, is required on every request (but reads, with
	// OpenReads).
	Token string
	// OpenReads, with a Token, answers reads (GET, HEAD) without it when
	// the Host names a loopback address: the page and its figures are
	// open to the machine's users, its controls are not. The handler
	// tells such a read by Locked. Set it only on a loopback listener.
	OpenReads bool
	// Cookie, when set, names the cookie that carries the token for a
	// page's own requests once it was opened with ?token=; "" takes the
	// token from the Authorization header only (a client, not a page).
	// Browsers keep cookies per host, not per port: two servers on one
	// host need two names.
	Cookie string
	// Realm names the surface in WWW-Authenticate.
	Realm string
	// NoToken and WrongToken are the 401 answers (the fix for the user);
	// empty, a generic message.
	NoToken, WrongToken string
	// BodyTypes are the media types a request body may have (default:
	// application/json only). A request without a body needs none.
	BodyTypes []string
	// MaxBody bounds a request body in bytes (default DefaultMaxBody).
	MaxBody int64
}

// Wrap guards next with the policy.
func (p Policy) Wrap(next http.Handler) http.Handler {
	if len(p.BodyTypes) == 0 {
		p.BodyTypes = []string{JSON}
	}
	if p.MaxBody <= 0 {
		p.MaxBody = DefaultMaxBody
	}
	csrf := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if p.Token != "" {
			switch got := p.credential(w, r); {
			case equal(got, p.Token):
			case p.OpenReads && isRead(r) && LoopbackHost(r.Host):
				r = r.WithContext(context.WithValue(r.Context(), lockedKey{}, true))
			default:
				p.refuse(w, got)
				return
			}
		} else if !LoopbackHost(r.Host) {
			Error(w, http.StatusForbidden, errors.New("this server answers only on a loopback host name (127.0.0.1, [::1], localhost)"))
			return
		}
		if csrf.Check(r) != nil {
			Error(w, http.StatusForbidden, errCrossOrigin)
			return
		}
		if hasBody(r) {
			if code, err := p.checkBody(r); err != nil {
				Error(w, code, err)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, p.MaxBody)
		}
		next.ServeHTTP(w, r)
	})
}

var errCrossOrigin = errors.New("cross-origin request refused: changes come only from this server's own page or from a client that is not a browser")

// hasBody reports whether r carries a body: a declared length above 0,
// or one sent chunked.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// checkBody checks a body's declared type and length.
func (p Policy) checkBody(r *http.Request) (int, error) {
	if r.ContentLength > p.MaxBody {
		return http.StatusRequestEntityTooLarge, TooLarge(p.MaxBody)
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !slices.Contains(p.BodyTypes, mt) {
		return http.StatusUnsupportedMediaType, fmt.Errorf("a body of type %q: want %s", ct, strings.Join(p.BodyTypes, " or "))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return http.StatusUnsupportedMediaType, fmt.Errorf("a body in charset %q: want utf-8", cs)
	}
	return 0, nil
}

// TooLarge is the error of a body over limit bytes.
func TooLarge(limit int64) error {
	return fmt.Errorf("body over %d bytes", limit)
}

// credential is the token r carries: the Authorization header's, else
// (for a page) the URL's ?token=, else the cookie's. The URL's comes
// first because it is the one the user just opened: a cookie left by an
// earlier server on this host and port is stale. When the URL's is
// right it sets the cookie (replacing any), so the page's own requests
// carry it.
func (p Policy) credential(w http.ResponseWriter, r *http.Request) string {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok || p.Cookie == "" {
		return got
	}
	if q := r.URL.Query().Get("token"); q != "" {
		if equal(q, p.Token) {
			http.SetCookie(w, &http.Cookie{Name: p.Cookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		return q
	}
	if c, err := r.Cookie(p.Cookie); err == nil {
		return c.Value
	}
	return ""
}

// refuse answers 401 for a missing or wrong token got.
func (p Policy) refuse(w http.ResponseWriter, got string) {
	realm := `Bearer realm="` + p.Realm + `"`
	if got == "" {
		w.Header().Set("WWW-Authenticate", realm)
		Error(w, http.StatusUnauthorized, errors.New(cmp(p.NoToken, "a token is required: send Authorization: Bearer TOKEN")))
		return
	}
	w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
	Error(w, http.StatusUnauthorized, errors.New(cmp(p.WrongToken, "the token sent is not this server's")))
}

// isRead reports whether r only reads: GET or HEAD.
func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

type lockedKey struct{}

// Locked reports whether r came through a policy's OpenReads without
// the token: it may read, and the page it reads should show its
// controls off.
func Locked(r *http.Request) bool {
	v, _ := r.Context().Value(lockedKey{}).(bool)
	return v
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// LoopbackHost reports whether a Host header names this machine by a
// loopback address or "localhost".
func LoopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listener's address is a loopback one:
// only there may a surface go without a token.
func IsLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// NewToken is 128 random bits in hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// DecodeJSON decodes r's body, one JSON value with no unknown field,
// into v. On failure it returns the status to answer: 413 for a body
// over the guard's limit ("body over N bytes", not a JSON error about
// the cut), 400 otherwise.
func DecodeJSON(r *http.Request, v any) (int, error) {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return 0, nil
	}
	if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge, TooLarge(tooBig.Limit)
	}
	if errors.Is(err, io.EOF) {
		return http.StatusBadRequest, errors.New("reading the JSON body: the body is empty")
	}
	return http.StatusBadRequest, fmt.Errorf("reading the JSON body: %w", err)
}

// Error answers code with {"error": err}.
func Error(w http.ResponseWriter, code int, err error) {
	WriteJSON(w, code, map[string]string{"error": err.Error()})
}

// WriteJSON answers code with v as JSON.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// BrowseURL is the address to print for a listener on addr: a wildcard
// address (0.0.0.0, [::]) is no place a browser can go, so it becomes
// 127.0.0.1 with a note that every interface is served (from elsewhere,
// the machine's name or address with the same port).
func BrowseURL(addr net.Addr) (url, note string) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + addr.String() + "/", ""
	}
	port := fmt.Sprint(tcp.Port)
	return "http://" + net.JoinHostPort("127.0.0.1", port) + "/",
		"listening on every interface: from another machine use this one's name or address, port " + port
}
