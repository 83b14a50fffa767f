package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ProbeNative describes a server spoken to by its native API (api is
// "tgi", "ollama", "ollama-generate", "triton", "triton-infer",
// "triton-grpc" or "torchserve"; base is the server's root)
// from the endpoints that server has for it: TGI's GET /info, Ollama's
// GET /api/version and /api/tags, Triton's GET /v2 and
// /v2/models/{model} (over gRPC, ServerMetadata and ModelMetadata). TorchServe lists its models on the management API
// (another port), which is not probed: its GET /ping is. Failure is
// recorded, never returned. Any other api is ProbeTarget's.
func ProbeNative(ctx context.Context, client *http.Client, base, api, model string, headers http.Header) Served {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g := getter{ctx: ctx, client: client, base: strings.TrimRight(base, "/"), headers: headers}
	var sv Served
	switch api {
	case "tgi":
		var info struct {
			ModelID        string `json:"model_id"`
			Version        string `json:"version"`
			MaxTotalTokens int    `json:"max_total_tokens"`
		}
		sv = g.get("/info", &info)
		if sv.Error == "" {
			sv.Version = info.Version
			sv.Models = []ServedModel{{ID: info.ModelID, MaxContext: info.MaxTotalTokens}}
		}
	case "ollama", "ollama-generate":
		var version struct {
			Version string `json:"version"`
		}
		var tags struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		sv = g.get("/api/version", &version)
		sv.Version = version.Version
		if tg := g.get("/api/tags", &tags); tg.Error != "" && sv.Error == "" {
			sv.Error = tg.Error
		}
		for _, m := range tags.Models {
			sv.Models = append(sv.Models, ServedModel{ID: m.Name})
		}
	case "triton", "triton-infer":
		var server struct {
			Version string `json:"version"`
		}
		var meta struct {
			Name     string `json:"name"`
			Platform string `json:"platform"`
		}
		sv = g.get("/v2", &server)
		sv.Version = server.Version
		md := g.get("/v2/models/"+url.PathEscape(model), &meta)
		if md.Error != "" && sv.Error == "" {
			sv.Error = md.Error
		}
		if meta.Name != "" {
			sv.Models = []ServedModel{{ID: meta.Name, OwnedBy: meta.Platform}}
		}
	case "triton-grpc":
		sv = probeTritonGRPC(ctx, client, base, model, headers)
	case "http":
		sv = Served{Error: "a templated http API's service has no known metadata endpoint: not probed"}
	case "torchserve":
		sv = g.get("/ping", &struct{}{})
		if sv.Error == "" {
			sv.Error = "TorchServe lists its models on the management API (port 8081 by default), which is not probed"
		}
	default:
		return ProbeTarget(ctx, client, base, headers)
	}
	return sv
}

// getter GETs JSON documents from one server.
type getter struct {
	ctx     context.Context
	client  *http.Client
	base    string
	headers http.Header
}

// get decodes base+path into v, describing the server's identifying
// headers and any failure in the Served it returns.
func (g getter) get(path string, v any) Served {
	u := g.base + path
	req, err := http.NewRequestWithContext(g.ctx, http.MethodGet, u, nil)
	if err != nil {
		return Served{Error: err.Error()}
	}
	req.Header = g.headers.Clone()
	resp, err := g.client.Do(req)
	if err != nil {
		return Served{Error: fmt.Sprintf("GET %s: %v", u, err)}
	}
	defer resp.Body.Close()
	sv := Served{Headers: identifying(resp.Header)}
	if resp.StatusCode != http.StatusOK {
		sv.Error = fmt.Sprintf("GET %s: HTTP %s", u, resp.Status)
		return sv
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		sv.Error = fmt.Sprintf("GET %s: %v", u, err)
	}
	return sv
}
