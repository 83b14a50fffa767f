package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/inferload/inferload/plan"
)

// maxPlanBytes bounds a plan file the launcher reads: plans are a few
// kilobytes; a device (/dev/zero) or a log is not one.
const maxPlanBytes = 1 << 20

// planDirectories are dirs made absolute, without repeats: where `ui`
// reads plan files from.
func planDirectories(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if !contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readPlanFile reads the plan file at path (relative to the working
// directory) for the launcher's page: only a regular .yaml or .yml file
// in one of dirs (a link leading out of it is refused: os.Root), at most
// maxPlanBytes. It returns the absolute path and the bytes. Its errors
// never hold the file's text.
func readPlanFile(dirs []string, path string) (string, []byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("plan %s: %w", path, err)
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(real, filepath.Base(abs))
	}
	for _, dir := range dirs {
		rel, err := filepath.Rel(dir, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if ext := filepath.Ext(rel); ext != ".yaml" && ext != ".yml" {
			return "", nil, fmt.Errorf("plan %s: not a .yaml or .yml file", path)
		}
		data, err := readInRoot(dir, rel)
		if err != nil {
			return "", nil, fmt.Errorf("plan %s: %w", path, err)
		}
		return abs, data, nil
	}
	return "", nil, fmt.Errorf("plan %s is not in the plan directories (%s): start inferload ui with --plan-dir DIR to read plans from another",
		path, strings.Join(dirs, ", "))
}

// readInRoot reads rel under dir: a regular file of at most maxPlanBytes.
func readInRoot(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Stat before opening: opening a FIFO would wait for a writer.
	if err := planSized(root.Stat(rel)); err != nil {
		return nil, err
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := planSized(f.Stat()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPlanBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPlanBytes {
		return nil, fmt.Errorf("over %d bytes: not a plan", maxPlanBytes)
	}
	return data, nil
}

// planSized checks a plan file's stat: regular, at most maxPlanBytes.
func planSized(fi os.FileInfo, err error) error {
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Size() > maxPlanBytes:
		return fmt.Errorf("%d bytes, over %d bytes: not a plan", fi.Size(), maxPlanBytes)
	}
	return nil
}

// quoted is a quoted span of a plan error: a value from the file.
var quoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`|'[^']*'")

// withoutFileText is a plan error as the launcher's page shows it: each
// problem keeps its file, line and field, but not the file's own text
// (the page may be another local user's; the file may not be a plan at
// all): an unknown field is not named and quoted values are elided.
func withoutFileText(err error) error {
	var errs plan.Errors
	if !errors.As(err, &errs) {
		return err
	}
	out := make(plan.Errors, len(errs))
	for i, e := range errs {
		c := *e
		if !strings.HasPrefix(c.Source, "--") {
			if strings.HasPrefix(c.Problem, "unknown field") {
				c.Field = "a field"
			}
			c.Problem = quoted.ReplaceAllString(c.Problem, "…")
		}
		out[i] = &c
	}
	return out
}
