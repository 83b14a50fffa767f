package distributed

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// RunTarPath is where a collector serves the merged run directory, once
// merged, as one tar stream: the way to take the results out of a pod
// whose image holds nothing but inferload (kubectl cp needs tar in the
// container).
const RunTarPath = "/v1/run.tar"

// errNotMerged answers GET /v1/run.tar before the merge.
var errNotMerged = errors.New("the run is not merged yet: the collector merges once every segment is done (GET /v1/status says which are)")

// handleRunTar streams the merged run directory as a tar archive whose
// entries sit under the directory's own name. Only that directory is
// served, read-only, through an os.Root: a symbolic link in it (to
// anywhere) is left out, and no part of the request names a path.
func (c *Collector) handleRunTar(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	dir := c.merged
	c.mu.Unlock()
	if dir == "" {
		http.Error(w, errNotMerged.Error(), http.StatusConflict)
		return
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer root.Close()
	name := filepath.Base(dir)
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+".tar"))
	// Once the first bytes are out the status is sent: a failure later
	// cuts the stream, which the reader sees as a truncated archive.
	_ = writeRunTar(w, root.FS(), name)
}

// writeRunTar writes every directory and regular file of fsys under
// prefix/ to w as a tar archive.
func writeRunTar(w io.Writer, fsys fs.FS, prefix string) error {
	tw := tar.NewWriter(w)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil // a link, a socket: not part of a run directory
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		hdr.Name = path.Join(prefix, p)
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if d.IsDir() {
			hdr.Name += "/"
			return tw.WriteHeader(hdr)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// FetchRun downloads the merged run directory from the collector at url
// (client carries its token) and unpacks it under parent; it returns the
// run directory's path.
func FetchRun(ctx context.Context, client *http.Client, url, parent string) (string, error) {
	resp, err := call(ctx, client, http.MethodGet, strings.TrimRight(url, "/")+RunTarPath, nil)
	if err != nil {
		return "", fmt.Errorf("collector %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return "", fmt.Errorf("collector %s: %w", url, &StatusError{What: "run.tar", Code: resp.StatusCode, Status: resp.Status, Message: strings.TrimSpace(string(msg))})
	}
	dir, err := UnpackRun(resp.Body, parent)
	if err != nil {
		return dir, fmt.Errorf("collector %s: %w", url, err)
	}
	return dir, nil
}

// UnpackRun unpacks a run directory's tar archive (as the collector
// serves it) under parent and returns the directory's path. It trusts
// nothing in the archive: every entry must be a directory or a regular
// file under one top directory with a plain name, which must not exist
// yet under parent (a fetch never overwrites a run); it writes through an
// os.Root, so no name ("../x", "/etc/x", a link planted on the way) can
// reach outside parent.
func UnpackRun(r io.Reader, parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(parent)
	if err != nil {
		return "", err
	}
	defer root.Close()
	top, err := unpackEntries(root, tar.NewReader(r), parent)
	if err != nil && top != "" {
		_ = root.RemoveAll(top) // made by this fetch: a half run directory would pass for a run
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, top), nil
}

// unpackEntries writes the archive's entries inside root and returns its
// top directory once it was made (so a failed fetch can remove it).
func unpackEntries(root *os.Root, tr *tar.Reader, parent string) (top string, err error) {
	made := ""
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return made, fmt.Errorf("run.tar: %w (a cut download: fetch again)", err)
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		first, _, _ := strings.Cut(name, "/")
		if !filepath.IsLocal(name) || strings.Contains(name, `\`) || (top != "" && first != top) {
			return made, fmt.Errorf("run.tar: entry %q is not inside one run directory: refused", hdr.Name)
		}
		if top == "" {
			top = first
			if _, err := root.Lstat(top); err == nil {
				return "", fmt.Errorf("%s exists already: fetch into another --out", filepath.Join(parent, top))
			}
			made = top
		}
		if err := unpackEntry(root, hdr, name, tr); err != nil {
			return made, err
		}
	}
	if top == "" {
		return "", errors.New("run.tar: empty archive")
	}
	return top, nil
}

// unpackEntry writes one entry of a run's archive inside root.
func unpackEntry(root *os.Root, hdr *tar.Header, name string, body io.Reader) error {
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(name, 0o755)
	case tar.TypeReg:
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("run.tar: %w", err)
		}
		if _, err := io.Copy(f, body); err != nil {
			f.Close()
			return fmt.Errorf("run.tar: %s: %w (a cut download: fetch again)", name, err)
		}
		return f.Close()
	}
	return fmt.Errorf("run.tar: entry %q is not a file or a directory: refused", hdr.Name)
}
