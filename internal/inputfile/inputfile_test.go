package inputfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadLimits: a file of exactly its kind's limit is read whole; one
// byte more, or /dev/zero, fails with the named limit at once.
func TestReadLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := Kind{"a test file", 1000, false}
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("k", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path string
		kind       Kind
		want       string // error substring, "" for success
	}{
		// Exactly the limit: read whole.
		{"at the limit", write("at", 1000), small, ""},
		// One byte more: refused, naming file, limit and kind.
		{"one past", write("past", 1001), small, "past: larger than 1000 bytes (the limit for a test file)"},
		// An endless device as a key file: refused after 64 KiB, not grown to gigabytes.
		{"dev zero key", "/dev/zero", Key, "/dev/zero: larger than 64 KiB (the limit for an API key or token file)"},
		// /dev/zero as a dataset: refused at its first byte, not read to 2 GiB.
		{"dev zero dataset", "/dev/zero", Dataset, "/dev/zero: not text (a NUL byte at offset 0), so not a dataset"},
		// A file that is not there: the open's error.
		{"missing", filepath.Join(dir, "none"), Key, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Read(context.Background(), tc.path, tc.kind)
			switch {
			case tc.want == "" && (err != nil || int64(len(b)) != tc.kind.Limit):
				t.Fatalf("%d bytes, %v; want all %d", len(b), err, tc.kind.Limit)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			var tl *TooLargeError
			if strings.Contains(tc.want, "larger") && !errors.As(err, &tl) {
				t.Errorf("%v is not a *TooLargeError", err)
			}
		})
	}
}

// TestReadStopsOnCancel: a context that ends stops a read of /dev/zero
// under a huge limit, of a FIFO whose writer never writes (the read
// blocks), and of a FIFO nobody opens for writing (the open blocks), each
// at its 200 ms deadline rather than never.
func TestReadStopsOnCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatalf("mkfifo: %v", err) // Linux always has FIFOs: no skip hides a missing one
		}
		return p
	}
	silent := fifo("silent")
	// Opened read-write, a FIFO's open does not wait (Linux): a writer
	// that holds it open and never writes.
	w, err := os.OpenFile(silent, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for _, tc := range []struct{ name, path string }{
		// Never blocks, never ends: the check between reads stops it.
		{"dev zero", "/dev/zero"},
		// Blocks in read: the deadline set when the context ends stops it.
		{"silent fifo", silent},
		// Blocks in open: given up when the context ends.
		{"fifo without writer", fifo("lonely")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := Read(ctx, tc.path, Kind{"a huge file", 1 << 40, false})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("error %v, want the context's deadline", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the read went on 10 s after its context ended")
			}
		})
	}
}
