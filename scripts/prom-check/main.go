// Command prom-check reads a Prometheus text exposition (format 0.0.4) on stdin and parses it with Prometheus's own
// parser, github.com/prometheus/common/expfmt's TextParser, with legacy (strictest) name validation. It also rejects
// a series that appears twice (same name and label set), which the parser leaves to its callers and a Prometheus
// server refuses at ingestion.
//
// It exits 1 with the parser's error on stderr when the page is invalid (for example "second HELP line for metric
// name"), and 0 with a JSON summary of the families on stdout when it is valid:
//
//	{"http_client_request_duration":{"type":"HISTOGRAM","help":"…","series":[{"labels":{…},"count":3}]}}
//
// Built by scripts/setup-prom-check.sh into .cache/prom-check/ (git-ignored); the tests of
// packages/opentelemetry run it on the pages @opentelemetry/exporter-prometheus writes.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// series is one metric of a family: its labels and its value (counter, gauge, untyped) or its sample count
// (histogram, summary).
type series struct {
	Labels map[string]string `json:"labels"`
	Value  *float64          `json:"value,omitempty"`
	Count  *uint64           `json:"count,omitempty"`
}

type family struct {
	Type   string   `json:"type"`
	Help   string   `json:"help"`
	Series []series `json:"series"`
}

func main() {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(os.Stdin)
	if err != nil {
		fail(err.Error())
	}
	out := make(map[string]family, len(families))
	for name, mf := range families {
		f := family{Type: mf.GetType().String(), Help: mf.GetHelp()}
		seen := make(map[string]bool, len(mf.GetMetric()))
		for _, m := range mf.GetMetric() {
			labels := make(map[string]string, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := signature(labels)
			if seen[key] {
				fail(fmt.Sprintf("duplicate series %s{%s}", name, key))
			}
			seen[key] = true
			f.Series = append(f.Series, summarize(m, labels))
		}
		out[name] = f
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fail(err.Error())
	}
}

// summarize keeps what a test asserts on: the value of a counter, gauge or untyped metric, the sample count of a
// histogram or summary.
func summarize(m *dto.Metric, labels map[string]string) series {
	s := series{Labels: labels}
	switch {
	case m.Counter != nil:
		v := m.Counter.GetValue()
		s.Value = &v
	case m.Gauge != nil:
		v := m.Gauge.GetValue()
		s.Value = &v
	case m.Untyped != nil:
		v := m.Untyped.GetValue()
		s.Value = &v
	case m.Histogram != nil:
		c := m.Histogram.GetSampleCount()
		s.Count = &c
	case m.Summary != nil:
		c := m.Summary.GetSampleCount()
		s.Count = &c
	}
	return s
}

// signature is a label set in a canonical order: name="value",… sorted by name.
func signature(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "prom-check: "+msg)
	os.Exit(1)
}
