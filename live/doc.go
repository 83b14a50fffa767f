// Package live holds a run's network outputs: what runs while a run runs
// (the load generator's own Prometheus metrics, Metrics, served at /metrics
// for a scraper by ServeMetrics or pushed to a Prometheus remote-write
// receiver by StartRemoteWrite) and the InfluxDB write sink (PostInflux),
// which posts a run's series when `inferload run --influx-out URL` ends or
// afterwards with `inferload export --influx-url`.
//
// It computes no figure of the report: Metrics counts finished
// record.Result values as they arrive, and the line protocol PostInflux
// sends is rendered by package report (report.InfluxSeries); live only
// delivers it. A failed delivery is an error returned to the caller, never
// a panic or a stalled run.
package live
