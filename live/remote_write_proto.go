package live

import (
	"math"

	writev2 "github.com/prometheus/client_golang/exp/api/remote/genproto/v2"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"
)

// encodeV2 builds a remote-write 2.0 request: labels and help texts are
// interned in the request's symbol table.
func encodeV2(series []rwSeries) *writev2.Request {
	st := writev2.NewSymbolTable()
	req := &writev2.Request{}
	for _, s := range series {
		req.Timeseries = append(req.Timeseries, &writev2.TimeSeries{
			LabelsRefs: st.SymbolizeLabels(s.labels, nil),
			Samples:    []*writev2.Sample{{Value: s.value, Timestamp: s.ts}},
			Metadata:   &writev2.Metadata{Type: v2Type(s.typ), HelpRef: st.Symbolize(s.help)},
		})
	}
	req.Symbols = st.Symbols()
	return req
}

// v2Type maps a gathered family's type to the protocol's.
func v2Type(t dto.MetricType) writev2.Metadata_MetricType {
	switch t {
	case dto.MetricType_COUNTER:
		return writev2.Metadata_METRIC_TYPE_COUNTER
	case dto.MetricType_GAUGE:
		return writev2.Metadata_METRIC_TYPE_GAUGE
	case dto.MetricType_HISTOGRAM:
		return writev2.Metadata_METRIC_TYPE_HISTOGRAM
	case dto.MetricType_SUMMARY:
		return writev2.Metadata_METRIC_TYPE_SUMMARY
	}
	return writev2.Metadata_METRIC_TYPE_UNSPECIFIED
}

// rwV1 is an encoded remote-write 1.0 prometheus.WriteRequest. The client
// module ships only 2.0 types and prometheus/prometheus (which has the
// 1.0 ones) is far too heavy, so the five small messages are written by
// hand with protowire; the Size and MarshalToSizedBuffer methods are what
// remote.API.Write looks for.
type rwV1 []byte

// Size is the encoded length.
func (r rwV1) Size() int { return len(r) }

// MarshalToSizedBuffer copies the encoding into b, which has Size bytes.
func (r rwV1) MarshalToSizedBuffer(b []byte) (int, error) { return copy(b, r), nil }

// encodeV1 writes WriteRequest{timeseries = 1: TimeSeries{labels = 1:
// Label{name = 1, value = 2}, samples = 2: Sample{value = 1, timestamp = 2}}}.
func encodeV1(series []rwSeries) rwV1 {
	var out, ts, buf []byte
	for _, s := range series {
		ts = ts[:0]
		for i := 0; i+1 < len(s.labels); i += 2 {
			buf = protowire.AppendTag(buf[:0], 1, protowire.BytesType)
			buf = protowire.AppendString(buf, s.labels[i])
			buf = protowire.AppendTag(buf, 2, protowire.BytesType)
			buf = protowire.AppendString(buf, s.labels[i+1])
			ts = protowire.AppendTag(ts, 1, protowire.BytesType)
			ts = protowire.AppendBytes(ts, buf)
		}
		buf = protowire.AppendTag(buf[:0], 1, protowire.Fixed64Type)
		buf = protowire.AppendFixed64(buf, math.Float64bits(s.value))
		buf = protowire.AppendTag(buf, 2, protowire.VarintType)
		buf = protowire.AppendVarint(buf, uint64(s.ts))
		ts = protowire.AppendTag(ts, 2, protowire.BytesType)
		ts = protowire.AppendBytes(ts, buf)
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, ts)
	}
	return out
}
