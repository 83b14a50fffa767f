// Package schedule decides when each request is due: closed-loop users with
// think time, or open-loop arrivals on an absolute schedule. It never knows
// what is sent.
package schedule
