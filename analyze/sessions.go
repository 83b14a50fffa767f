package analyze

import "github.com/inferload/inferload/record"

// backSessions says, for each conversational class, which percentile of
// its time to finish a conversation the completed conversations back at
// the given confidence: the one minimum-samples rule (MinSamples), since a
// run of 4-turn conversations holds a quarter as many of them as requests.
func backSessions(s *record.Summary, confidence float64) {
	for _, ss := range s.Sessions {
		ss.DurationBacked = Backed(ss.Duration.Count, confidence)
	}
}
