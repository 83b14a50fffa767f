package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"strconv"
	"strings"
	"sync"
)

// Image formats of synthetic images.
const (
	ImageJPEG = "jpeg"
	ImagePNG  = "png"
)

// Bounds on synthetic images: a plan asking for more is a typo, and each
// variant is held in memory for the whole run.
const (
	maxImageSide  = 8192
	maxImageCount = 32
	// ImageVariants is how many distinct images a class draws from per
	// (size, format): enough that consecutive requests do not all send
	// the same bytes, few enough that rendering them all up front is
	// cheap (a 1080p JPEG takes tens of milliseconds).
	ImageVariants = 4
)

// ImageConfig asks for synthetic images in every request of a class.
type ImageConfig struct {
	// Count is the number of images per request (0: none).
	Count int
	// Width and Height are each image's size in pixels.
	Width, Height int
	// Format is ImageJPEG or ImagePNG ("" means JPEG).
	Format string
}

// ParseImageSize reads "1920x1080".
func ParseImageSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if !ok || errW != nil || errH != nil {
		return 0, 0, fmt.Errorf("image size %q: want WIDTHxHEIGHT in pixels, e.g. 1920x1080", s)
	}
	if w < 1 || h < 1 || w > maxImageSide || h > maxImageSide {
		return 0, 0, fmt.Errorf("image size %q: each side must be 1 to %d pixels", s, maxImageSide)
	}
	return w, h, nil
}

// Validate checks the configuration (the zero value, no images, is valid).
func (c ImageConfig) Validate() error {
	if c.Count == 0 {
		return nil
	}
	if c.Count < 0 || c.Count > maxImageCount {
		return fmt.Errorf("images.count %d: want 1 to %d", c.Count, maxImageCount)
	}
	if c.Width < 1 || c.Height < 1 || c.Width > maxImageSide || c.Height > maxImageSide {
		return fmt.Errorf("images.size %dx%d: each side must be 1 to %d pixels", c.Width, c.Height, maxImageSide)
	}
	switch c.Format {
	case "", ImageJPEG, ImagePNG:
		return nil
	}
	return fmt.Errorf("images.format %q: want %s or %s", c.Format, ImageJPEG, ImagePNG)
}

// imageKey names one rendered variant; equal keys give equal bytes.
type imageKey struct {
	seed          uint64
	width, height int
	format        string
	variant       int
}

// imageCache holds every variant rendered in this process, so classes,
// phases and sweeps with the same images share one encoding.
var imageCache sync.Map // imageKey -> Image

// SyntheticImages returns the ImageVariants distinct images c draws from,
// rendering (once per process) those not yet cached. The result is
// deterministic in (seed, c).
func SyntheticImages(seed uint64, c ImageConfig) ([]Image, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	format := c.Format
	if format == "" {
		format = ImageJPEG
	}
	out := make([]Image, ImageVariants)
	for v := range out {
		k := imageKey{seed, c.Width, c.Height, format, v}
		if im, ok := imageCache.Load(k); ok {
			out[v] = im.(Image)
			continue
		}
		im, err := renderImage(k)
		if err != nil {
			return nil, err
		}
		imageCache.Store(k, im)
		out[v] = im
	}
	return out, nil
}

// renderImage draws and encodes one variant as a data URI. The picture is
// a colour gradient under seeded 16×16 blocks and per-pixel noise: flat
// colour would compress to almost nothing, and a 1080p image that is 20 KB
// on the wire would flatter the network and decoder as much as a 64×64
// one flatters the vision encoder.
func renderImage(k imageKey) (Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, k.width, k.height))
	rng := splitmix64(k.seed ^ uint64(k.variant+1)*0x9e37_79b9_7f4a_7c15)
	blocksX := (k.width + 15) / 16
	blockShift := make([]uint8, blocksX*((k.height+15)/16))
	for i := range blockShift {
		rng = splitmix64(rng)
		blockShift[i] = uint8(rng)
	}
	for y := range k.height {
		row := img.Pix[y*img.Stride:]
		for x := range k.width {
			rng ^= rng << 13 // xorshift: a cheap per-pixel draw
			rng ^= rng >> 7
			rng ^= rng << 17
			b := blockShift[(y/16)*blocksX+x/16]
			n := uint8(rng) & 0x0f
			px := row[x*4 : x*4+4]
			px[0] = uint8(x*255/k.width) + b/2 + n
			px[1] = uint8(y*255/k.height) + b/3 + n
			px[2] = b + n
			px[3] = 0xff
		}
	}
	var buf bytes.Buffer
	var err error
	if k.format == ImagePNG {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
	}
	if err != nil {
		return Image{}, fmt.Errorf("images: encoding %dx%d %s: %w", k.width, k.height, k.format, err)
	}
	uri := "data:image/" + k.format + ";base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	return Image{URL: uri, Width: k.width, Height: k.height}, nil
}

// withImages adds a class's synthetic images to the specs of its source.
type withImages struct {
	src      Source
	seed     uint64
	count    int
	variants []Image
}

// imageStream separates the draw of a request's image variants from its
// other draws.
const imageStream = 0x1a6e_5eed

// Spec returns the source's spec with count images, each a variant drawn
// from (seed, i).
func (w *withImages) Spec(i uint64) Spec {
	s := w.src.Spec(i)
	s.Images = make([]Image, w.count)
	r := splitmix64(w.seed ^ imageStream ^ splitmix64(i))
	for k := range s.Images {
		s.Images[k] = w.variants[r%uint64(len(w.variants))]
		r = splitmix64(r)
	}
	return s
}
