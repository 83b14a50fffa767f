package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the user the image runs as (distroless' "nonroot"), the
// uid the Kubernetes manifests (distributed.K8sManifests) ask for.
const nonRoot = "65532:65532"

// Write writes the image as an OCI image layout, tarred, to w: one layer
// holding /inferload (and the CA bundle, when given, at the path Go's TLS
// looks for it), an empty /tmp, the binary as entrypoint, the non-root user.
// The layer's files carry a fixed time, so the same binary gives the same
// image digest.
func Write(w io.Writer, binary, caBundle []byte, tag string) error {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(rootFS(binary, caBundle))), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{"/inferload"}
	cfg.Config.User = nonRoot
	cfg.Config.WorkingDir = "/tmp"
	cfg.Config.Env = []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "inferload-oci-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return err
	}
	return tarDir(w, dir)
}

// rootFS is the layer's tar: the binary, the CA bundle, /tmp.
func rootFS(binary, caBundle []byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := []string{"etc/", "etc/ssl/", "etc/ssl/certs/", "tmp/"}
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch})
	}
	file := func(name string, mode int64, data []byte) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch})
		_, _ = tw.Write(data)
	}
	file("inferload", 0o755, binary)
	if len(caBundle) > 0 {
		file("etc/ssl/certs/ca-certificates.crt", 0o644, caBundle)
	}
	_ = tw.Close()
	return buf.Bytes()
}

// tarDir writes the layout directory as a tar (an "oci-archive").
func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, hdr.ModTime = filepath.ToSlash(rel), time.Unix(0, 0)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing the OCI archive: %w", err)
	}
	return tw.Close()
}
