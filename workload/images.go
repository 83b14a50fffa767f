package workload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig reads the sizes of GIF data URIs too
	"strings"
)

// Image is one image of a chat message, sent as an OpenAI image_url
// content part.
type Image struct {
	// URL is a data URI (data:image/jpeg;base64,...) or an http(s) URL.
	URL string
	// Detail is the part's "detail" as the dataset gave it ("" for none).
	Detail string
	// Width and Height are the image's size in pixels, read from a data
	// URI's header; 0 when unknown (an http URL, a format Go cannot read).
	Width, Height int
}

// SizeLabel is the image's size as "1920x1080", or "unknown".
func (im Image) SizeLabel() string {
	if im.Width <= 0 || im.Height <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%dx%d", im.Width, im.Height)
}

// ImageCount is the number of images the spec sends: its own (synthetic)
// ones and those of its messages.
func (s Spec) ImageCount() int {
	n := len(s.Images)
	for _, m := range s.Messages {
		n += len(m.Images)
	}
	return n
}

// LargestImage is the spec's image with the most pixels (the one that
// dominates its cost); ok is false without images.
func (s Spec) LargestImage() (im Image, ok bool) {
	consider := func(imgs []Image) {
		for _, c := range imgs {
			if !ok || c.Width*c.Height > im.Width*im.Height {
				im, ok = c, true
			}
		}
	}
	consider(s.Images)
	for _, m := range s.Messages {
		consider(m.Images)
	}
	return im, ok
}

// contentPart is one element of an OpenAI message's content array.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// ImageURL is {"url", "detail"} or, in older files, the URL alone.
	ImageURL rawImageURL `json:"image_url"`
}

// rawImageURL accepts both shapes of image_url.
type rawImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail"`
}

func (u *rawImageURL) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &u.URL)
	}
	type plain rawImageURL
	return json.Unmarshal(b, (*plain)(u))
}

// partImage checks an image_url part and reads its size when the URL is
// a data URI.
func partImage(p contentPart) (Image, error) {
	im := Image{URL: p.ImageURL.URL, Detail: p.ImageURL.Detail}
	switch {
	case strings.HasPrefix(im.URL, "data:"):
		w, h, err := dataURISize(im.URL)
		if err != nil {
			return Image{}, err
		}
		im.Width, im.Height = w, h
	case strings.HasPrefix(im.URL, "http://"), strings.HasPrefix(im.URL, "https://"):
	case im.URL == "":
		return Image{}, errors.New("image_url has no url")
	default:
		return Image{}, fmt.Errorf("image_url %.40q: want a data: URI or an http(s) URL", im.URL)
	}
	return im, nil
}

// dataURISize checks a base64 data URI and reads the image's size from
// its header (0, 0 for a format the standard library cannot read, such
// as WebP: the server may still take it).
func dataURISize(uri string) (w, h int, err error) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return 0, 0, errors.New("image_url data URI: want data:<type>;base64,<data>")
	}
	if !strings.HasPrefix(meta, "image/") {
		return 0, 0, fmt.Errorf("image_url data URI of type %q: want an image/ type", strings.TrimSuffix(meta, ";base64"))
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return 0, 0, fmt.Errorf("image_url data URI: bad base64: %w", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if errors.Is(err, image.ErrFormat) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("image_url data URI: unreadable image: %w", err)
	}
	return cfg.Width, cfg.Height, nil
}
