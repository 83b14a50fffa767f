package workload

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"
)

func TestDatasetImagesKept(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset("testdata/dataset/images.jsonl", DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 3 {
		t.Fatalf("%d entries, want 3", d.Len())
	}
	// Line 1: a single user message with an image keeps its messages, so
	// the image is not lost with them; its size comes from the data URI.
	first := d.Entry(0).Messages
	if len(first) != 1 || len(first[0].Images) != 1 {
		t.Fatalf("line 1 messages = %+v, want one message with one image", first)
	}
	if im := first[0].Images[0]; im.Width != 3 || im.Height != 2 || im.Detail != "high" || !strings.HasPrefix(im.URL, "data:image/png;base64,") {
		t.Errorf("line 1 image = %dx%d detail %q, want 3x2 high PNG", im.Width, im.Height, im.Detail)
	}
	if first[0].Content != "what is in this picture?" {
		t.Errorf("line 1 text = %q", first[0].Content)
	}
	// Line 2: an http URL in the older string shape is kept, size unknown.
	second := d.Entry(1).Messages
	if len(second) != 2 || len(second[1].Images) != 1 || second[1].Images[0].URL != "https://example.com/cat.jpg" {
		t.Fatalf("line 2 messages = %+v", second)
	}
	if got := second[1].Images[0].SizeLabel(); got != "unknown" {
		t.Errorf("http image size = %s, want unknown", got)
	}
	if got := d.FirstImageLine(); got != 1 {
		t.Errorf("FirstImageLine = %d, want 1", got)
	}
	if d.Entry(2).Messages != nil {
		t.Errorf("line 3 has no image: its prompt is the whole input")
	}
}

func TestDatasetPartErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	ok := `{"messages":[{"role":"user","content":"hi"}]}` + "\n"
	for _, tt := range []struct {
		name, line, want string
	}{
		// Audio cannot be sent by any API: an error, never a silent drop.
		{"audio", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]}`, `line 2: field messages.0.content: part 0: type "input_audio" cannot be sent`},
		// A data URI that is not base64 cannot be what the user meant.
		{"bad base64", `{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/png;base64,@@@"}}]}]}`, "line 2: field messages.0.content: part 1: image_url data URI: bad base64"},
		// A data URI of another media type is not an image.
		{"not an image", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/plain;base64,aGk="}}]}]}`, `image/ type`},
		// A relative path or file: URL is nothing a server can fetch.
		{"file url", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///tmp/x.png"}}]}]}`, "want a data: URI or an http(s) URL"},
		{"no url", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "image_url has no url"},
		// A PNG header that lies is caught when the size is read.
		{"truncated png", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`, "unreadable image"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, "d.jsonl", ok+tt.line+"\n")
			_, err := LoadDataset(path, DatasetOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("err = %v, want one naming line 2 and containing %q", err, tt.want)
			}
		})
	}
}

func TestSyntheticImages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg    ImageConfig
		decode func([]byte) (image.Image, error)
	}{
		{ImageConfig{Count: 1, Width: 64, Height: 64, Format: ImageJPEG}, func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }},
		{ImageConfig{Count: 2, Width: 320, Height: 180}, func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }}, // "" is JPEG
		{ImageConfig{Count: 1, Width: 33, Height: 17, Format: ImagePNG}, func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }},
	} {
		a, err := SyntheticImages(7, tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		imageCache.Clear() // render again: the bytes must not depend on the cache
		b, err := SyntheticImages(7, tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for v := range a {
			if a[v].URL != b[v].URL {
				t.Errorf("%+v variant %d: two renders differ", tt.cfg, v)
			}
			seen[a[v].URL] = true
			raw, err := base64.StdEncoding.DecodeString(a[v].URL[strings.IndexByte(a[v].URL, ',')+1:])
			if err != nil {
				t.Fatal(err)
			}
			img, err := tt.decode(raw)
			if err != nil {
				t.Fatalf("%+v: decoding back: %v", tt.cfg, err)
			}
			if got := img.Bounds().Size(); got.X != tt.cfg.Width || got.Y != tt.cfg.Height || a[v].Width != got.X || a[v].Height != got.Y {
				t.Errorf("%+v: decoded %v, Image says %dx%d", tt.cfg, got, a[v].Width, a[v].Height)
			}
		}
		if len(seen) != ImageVariants {
			t.Errorf("%+v: %d distinct variants, want %d", tt.cfg, len(seen), ImageVariants)
		}
	}
}

func TestSyntheticImageSizeIsRealistic(t *testing.T) {
	t.Parallel()
	start := time.Now()
	imgs, err := SyntheticImages(11, ImageConfig{Count: 1, Width: 1920, Height: 1080, Format: ImageJPEG})
	if err != nil {
		t.Fatal(err)
	}
	// A 1080p photo at quality 85 is a few hundred KB: noise keeps the
	// synthetic one from compressing to a flattering few KB.
	if n := len(imgs[0].URL); n < 200<<10 || n > 4<<20 {
		t.Errorf("1080p JPEG data URI is %d bytes, want 200 KB to 4 MB", n)
	}
	t.Logf("1080p JPEG: %d bytes as a data URI; %d variants rendered in %v", len(imgs[0].URL), ImageVariants, time.Since(start))
}

func TestImageConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  ImageConfig
		want string
	}{
		{ImageConfig{Count: -1, Width: 1, Height: 1}, "images.count"},
		{ImageConfig{Count: 99, Width: 1, Height: 1}, "images.count"},
		{ImageConfig{Count: 1, Width: 0, Height: 1}, "images.size"},
		{ImageConfig{Count: 1, Width: 9000, Height: 1}, "images.size"},
		{ImageConfig{Count: 1, Width: 8, Height: 8, Format: "webp"}, "images.format"},
	} {
		if err := tt.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.cfg, err, tt.want)
		}
	}
	for _, s := range []string{"", "1920", "1920x", "x1080", "0x10", "10x9000", "axb"} {
		if _, _, err := ParseImageSize(s); err == nil {
			t.Errorf("ParseImageSize(%q) accepted", s)
		}
	}
	if w, h, err := ParseImageSize(" 1920X1080 "); err != nil || w != 1920 || h != 1080 {
		t.Errorf("ParseImageSize = %d, %d, %v", w, h, err)
	}
}

func TestClassImagesInSpecs(t *testing.T) {
	t.Parallel()
	in, _ := ParseDist("16")
	out, _ := ParseDist("8")
	cfg := MixConfig{Seed: 3, Classes: []ClassConfig{{Name: "vision", Weight: 1, Input: in, Output: out,
		Images: ImageConfig{Count: 2, Width: 64, Height: 48, Format: ImagePNG}}}}
	a, err := NewMix(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewMix(cfg)
	for i := range uint64(20) {
		s := a.Spec(i)
		if s.ImageCount() != 2 {
			t.Fatalf("spec %d has %d images, want 2", i, s.ImageCount())
		}
		if im, _ := s.LargestImage(); im.SizeLabel() != "64x48" {
			t.Errorf("spec %d largest image %s", i, im.SizeLabel())
		}
		if again := b.Spec(i); again.Images[0].URL != s.Images[0].URL || again.Images[1].URL != s.Images[1].URL {
			t.Errorf("spec %d: images differ between two mixes with the same seed", i)
		}
	}
}

// FuzzContentParts feeds arbitrary message content to the part parser:
// it must never panic, and every image it keeps has a URL of a kind a
// server can take.
func FuzzContentParts(f *testing.F) {
	f.Add(`"plain"`)
	f.Add(`[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]`)
	f.Add(`[{"type":"image_url","image_url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAA="}]`)
	f.Add(`[{"type":"input_audio"}]`)
	f.Add(`[{"type":"image_url","image_url":5}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		_, images, err := messageContent([]byte(raw))
		if err != nil {
			return
		}
		for _, im := range images {
			u := im.URL
			if !strings.HasPrefix(u, "data:image/") && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				t.Fatalf("kept image with URL %.60q", u)
			}
			if im.Width < 0 || im.Height < 0 {
				t.Fatalf("negative size %dx%d", im.Width, im.Height)
			}
		}
	})
}
