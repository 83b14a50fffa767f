package plan

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
)

// The spellings of workload.salt besides a fixed salt.
const (
	// SaltRun draws a new salt for every run (the default), so no run's
	// prompts open like an earlier run's and a prefix cache the earlier
	// run left warm cannot flatter the next.
	SaltRun = "run"
	// SaltOff sends the seed's prompts with no salt: every run of the plan
	// sends byte-identical prompts (an exact replay).
	SaltOff = "off"
	// DefaultSalt is SaltRun.
	DefaultSalt = SaltRun
)

// saltRe is what a fixed salt may be: a short plain word, so it reads
// the same in plan.yaml, a flag and a report.
var saltRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// salt checks workload.salt.
func (v *validator) salt() {
	if s := v.p.Workload.Salt; !saltRe.MatchString(s) {
		v.fail("workload.salt", "%q: want run (a new salt each run, the default), off (no salt: the seed's prompts exactly) "+
			"or a fixed salt of 1-64 letters, digits, '.', '_' or '-' (a recorded run's, to replay its prompts)", s)
	}
}

// promptSalt is the salt the workload opens prompts with: none when off.
// An unresolved "run" is a fixed salt of its own (the fleet planner
// builds a workload without running it); a run resolves it first
// (RunSalt).
func (w *Workload) promptSalt() string {
	if w.Salt == SaltOff {
		return ""
	}
	return w.Salt
}

// RunSalt is the salt a run of the plan uses: a fixed salt and off as
// they are; for run, a new one, drawn at random, or derived from key when
// key is set: the segments of a distributed run pass the name they share
// (the plan's name and their common start), so they all send one salt,
// and the next run, starting at another instant, another.
func (w *Workload) RunSalt(key string) string {
	if w.Salt != SaltRun {
		return w.Salt
	}
	v := rand.Uint64()
	if key != "" {
		h := fnv.New64a()
		h.Write([]byte(key))
		v = h.Sum64()
	}
	return fmt.Sprintf("%012x", v&(1<<48-1))
}
