package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"
)

// dataURI encodes a blank w×h image as a data URI.
func dataURI(t testing.TB, w, h int, format string) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var b bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestImageTokens(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		w, h, want int
	}{
		{64, 64, 255},      // one tile
		{512, 512, 255},    // exactly one tile
		{513, 512, 425},    // a pixel over: two tiles
		{1024, 1024, 765},  // four tiles
		{1920, 1080, 2125}, // 4×3 tiles: the 1080p the seeds' users sent
		{4096, 4096, 2805}, // scaled to 2048×2048 first: 16 tiles
		{8000, 10, 765},    // scaled to 2048×2: 4×1 tiles
		{0, 10, 0},         // no image, no cost
	} {
		if got := ImageTokens(tt.w, tt.h); got != tt.want {
			t.Errorf("ImageTokens(%d, %d) = %d, want %d", tt.w, tt.h, got, tt.want)
		}
	}
}

// chatWithImage is a chat body whose one message holds text and an image.
func chatWithImage(text, url string) string {
	return fmt.Sprintf(`{"messages":[{"role":"user","content":[{"type":"text","text":%q},{"type":"image_url","image_url":{"url":%q}}]}],"max_tokens":1,"ignore_eos":true}`, text, url)
}

// The seeds' trap: a 1080p image costs far more prefill than a 64×64
// thumbnail with the same text, in prompt tokens and in time.
func TestImagesCostPrefill(t *testing.T) {
	t.Parallel()
	_, url, client := newTestServer(t, func(c *Config) {
		c.Profile.MaxModelLen = 8192
		c.Profile.MaxNumBatchedTokens = 8192
		c.Profile.Cost.PrefillPerToken = 50 * time.Microsecond // 2125 tokens: ~106 ms
	})
	text := "describe this picture in one word"
	send := func(image string) (tokens int, e2e time.Duration) {
		start := time.Now()
		r := post(context.Background(), client, url+"/v1/chat/completions", chatWithImage(text, image))
		e2e = time.Since(start)
		if r.err != nil || r.status != 200 {
			t.Fatalf("status %d err %v: %s", r.status, r.err, r.body)
		}
		var v struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatal(err)
		}
		return v.Usage.PromptTokens, e2e
	}
	small, smallTime := send(dataURI(t, 64, 64, "png"))
	large, largeTime := send(dataURI(t, 1920, 1080, "jpeg"))
	if large-small != 2125-255 {
		t.Errorf("prompt tokens 64x64 %d, 1080p %d: want 1080p to cost %d more", small, large, 2125-255)
	}
	// 1870 more tokens at 50 µs each is ~94 ms more prefill.
	if largeTime-smallTime < 60*time.Millisecond {
		t.Errorf("1080p took %v, 64x64 %v: want the large image's prefill at least 60 ms longer", largeTime, smallTime)
	}
	http, _ := send("https://example.com/cat.jpg")
	if http-small != 765-255 {
		t.Errorf("an unfetched URL costs %d tokens over 64x64, want %d (1024x1024)", http-small, 765-255)
	}
}

func TestImagePartErrors(t *testing.T) {
	t.Parallel()
	_, url, client := newTestServer(t, nil)
	for _, img := range []string{
		"data:image/png;base64,@@@@",         // not base64
		"data:image/png;base64,iVBORw0KGgo=", // a PNG cut short
		"ftp://example.com/a.png",            // nothing a server fetches
		"data:image/png,rawbytes",            // not base64-encoded
	} {
		r := post(context.Background(), client, url+"/v1/chat/completions", chatWithImage("x", img))
		if r.status != 400 || !strings.Contains(string(r.body), "image_url") {
			t.Errorf("%.30s: status %d %s, want a 400 naming image_url", img, r.status, r.body)
		}
	}
}
