package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

// InfluxMeasurement is the measurement name of the series in InfluxDB line
// protocol.
const InfluxMeasurement = "inferload_series"

// InfluxSeries writes per-second windows as InfluxDB line protocol, one
// line per window, stamped in nanoseconds at the window's start on the wall
// clock (the run's start + t_s). Counts are integer fields (suffix i),
// latencies float fields in milliseconds; the run name is a tag.
type InfluxSeries struct {
	w       io.Writer
	prefix  []byte // measurement and tags, escaped once
	started time.Time
	buf     []byte
}

// NewInfluxSeries returns a writer of line protocol to w for the run named
// run that started at started.
func NewInfluxSeries(w io.Writer, run string, started time.Time) *InfluxSeries {
	prefix := []byte(InfluxMeasurement)
	if run != "" {
		prefix = append(prefix, ",run="...)
		prefix = append(prefix, influxEscape(run)...)
	}
	return &InfluxSeries{w: w, prefix: prefix, started: started}
}

// Write appends the line of one window.
func (s *InfluxSeries) Write(win *record.Window) error {
	b := append(s.buf[:0], s.prefix...)
	b = append(b, ' ')
	ints := []struct {
		key string
		v   int64
	}{
		{"completed", win.Completed}, {"succeeded", win.Succeeded}, {"failed", win.Failed},
		{"expected_rejections", win.ExpectedRejections}, {"warmup", win.Warmup},
		{"output_tokens", win.OutputTokens}, {"input_tokens", win.InputTokens},
	}
	for i, f := range ints {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f.key...)
		b = append(b, '=')
		b = strconv.AppendInt(b, f.v, 10)
		b = append(b, 'i')
	}
	b = appendFloatField(b, "ttft_p50_ms", win.TTFTP50MS)
	b = appendFloatField(b, "ttft_p99_ms", win.TTFTP99MS)
	b = appendFloatField(b, "e2e_p99_ms", win.E2EP99MS)
	b = append(b, ' ')
	b = strconv.AppendInt(b, s.started.Add(time.Duration(win.TS)*time.Second).UnixNano(), 10)
	b = append(b, '\n')
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("writing line protocol of second %d: %w", win.TS, err)
	}
	return nil
}

func appendFloatField(b []byte, key string, v float64) []byte {
	b = append(b, ',')
	b = append(b, key...)
	b = append(b, '=')
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// influxEscaper escapes a tag value: commas, equals signs and spaces end a
// tag unless escaped, and a newline would end the line, so it is replaced.
var influxEscaper = strings.NewReplacer(`\`, `\\`, ",", `\,`, "=", `\=`, " ", `\ `, "\n", `\ `, "\r", `\ `)

func influxEscape(s string) string { return influxEscaper.Replace(s) }
