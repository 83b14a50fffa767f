package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestImage: the archive is an OCI image layout holding one image whose
// entrypoint is the binary, run as the non-root user, with the binary
// executable and byte for byte the one given; the same binary gives the
// same digest.
func TestImage(t *testing.T) {
	t.Parallel()
	binary := []byte("\x7fELF not really a binary, but bytes to carry")
	var a, b bytes.Buffer
	if err := Write(&a, binary, []byte("-----BEGIN CERTIFICATE-----\n"), "inferload:test"); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, binary, []byte("-----BEGIN CERTIFICATE-----\n"), "inferload:test"); err != nil {
		t.Fatal(err)
	}
	img := readLayout(t, a.Bytes())
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != nonRoot || !slices.Equal(cfg.Config.Entrypoint, []string{"/inferload"}) || cfg.OS != "linux" {
		t.Errorf("config %+v: want entrypoint /inferload as %s on linux", cfg.Config, nonRoot)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v: want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	var got []byte
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		if h.Name == "inferload" {
			got, _ = io.ReadAll(tr)
		}
	}
	if h := files["inferload"]; h == nil || h.Mode&0o111 == 0 || !bytes.Equal(got, binary) {
		t.Errorf("the layer's /inferload is %+v, %q: want the binary, executable", h, got)
	}
	if files["etc/ssl/certs/ca-certificates.crt"] == nil || files["tmp/"] == nil {
		t.Errorf("layer files %v: want the CA bundle and /tmp", files)
	}
	d1, _ := img.Digest()
	d2, _ := readLayout(t, b.Bytes()).Digest()
	if d1 != d2 {
		t.Errorf("the same binary gave digests %s and %s", d1, d2)
	}
}

// readLayout untars an OCI archive and returns its one image.
func readLayout(t *testing.T, archive []byte) v1.Image {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "inferload:test" {
		t.Fatalf("index %+v, %v: want one image named inferload:test", m, err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
