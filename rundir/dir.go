package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Create makes parent/<UTC time>-<name> for a run that started at
// started, adding a counter if a run of the same name started in the same
// second.
func Create(parent, name string, started time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating output directory: %w", err)
	}
	base := started.UTC().Format("20060102T150405Z") + "-" + name
	for i := 0; i < 100; i++ {
		dir := filepath.Join(parent, base)
		if i > 0 {
			dir = fmt.Sprintf("%s.%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("creating run directory: %w", err)
		}
	}
	return "", fmt.Errorf("creating run directory: too many runs named %q in one second", name)
}

// WriteFileAtomic writes path through a temporary file renamed over it, so
// a reader never opens half a file.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	err = write(tmp)
	if err == nil {
		// CreateTemp makes the file private; run files are meant to be shared.
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteJSON writes v to path as indented JSON with a trailing newline.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}
