package plan

import "testing"

// RunSalt: run draws a new salt each call unless a shared key decides it
// (one key, one salt; another key, another); off and a fixed salt are
// kept; and the workload gets no salt only for off.
func TestRunSalt(t *testing.T) {
	t.Parallel()
	run := &Workload{Salt: SaltRun}
	if a, b := run.RunSalt(""), run.RunSalt(""); a == b || !saltRe.MatchString(a) {
		t.Errorf("two runs drew salts %q and %q: want two different valid salts", a, b)
	}
	key := "shards@2026-12-01T20:00:00Z"
	if a, b := run.RunSalt(key), run.RunSalt(key); a != b {
		t.Errorf("segments with one key drew %q and %q", a, b)
	}
	if a, b := run.RunSalt(key), run.RunSalt("shards@2026-12-01T20:05:00Z"); a == b {
		t.Errorf("two distributed runs (two starts) share the salt %q", a)
	}
	for _, fixed := range []string{SaltOff, "3f9a0c1e77b2"} {
		w := &Workload{Salt: fixed}
		if got := w.RunSalt(key); got != fixed {
			t.Errorf("salt %q resolved to %q", fixed, got)
		}
	}
	tests := []struct {
		salt, want string
	}{
		{SaltOff, ""},                    // off: the unsalted prompts
		{"3f9a0c1e77b2", "3f9a0c1e77b2"}, // a fixed salt reaches the workload
		{SaltRun, SaltRun},               // unresolved (no run): a salt of its own
	}
	for _, tt := range tests {
		w := &Workload{Salt: tt.salt, InputTokens: "8", OutputTokens: "8"}
		cfg, err := w.MixConfig()
		if err != nil || cfg.Salt != tt.want {
			t.Errorf("salt %q: workload salt %q (err %v), want %q", tt.salt, cfg.Salt, err, tt.want)
		}
	}
}
