package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/inferload/inferload/record"
)

// junitSuites is the JUnit XML document CI servers (Jenkins, GitLab,
// GitHub test reporters) read: one suite per run, one test case per
// threshold.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Failure    *junitProblem    `xml:"failure,omitempty"`
	Error      *junitProblem    `xml:"error,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
}

// WriteJUnit writes the threshold verdicts of s as JUnit XML: a threshold
// that failed is a <failure>, one that could not be checked (it named no
// summary figure) an <error>, so CI shows each expression as its own test.
// A run without thresholds gives a valid document with no test cases.
func WriteJUnit(w io.Writer, s *record.Summary) error {
	suite := junitSuite{Name: "inferload thresholds: " + s.Name}
	if !s.Started.IsZero() {
		suite.Timestamp = s.Started.UTC().Format(time.RFC3339)
	}
	for _, t := range s.Thresholds {
		suite.Cases = append(suite.Cases, junitCaseOf(t, s.Name))
		suite.Tests++
		switch {
		case t.Error != "":
			suite.Errors++
		case !t.Passed:
			suite.Failures++
		}
	}
	doc := junitSuites{Name: "inferload", Tests: suite.Tests, Failures: suite.Failures,
		Errors: suite.Errors, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	return nil
}

// junitCaseOf turns one verdict into a test case named by its expression.
func junitCaseOf(t record.ThresholdResult, run string) junitCase {
	c := junitCase{Name: t.Expr, Classname: "inferload.thresholds." + run}
	if t.Error != "" {
		c.Error = &junitProblem{Message: t.Error, Type: "threshold_error"}
		return c
	}
	value := strconv.FormatFloat(t.Value, 'g', -1, 64)
	c.Properties = &junitProperties{[]junitProperty{{Name: "metric", Value: t.Metric}, {Name: "value", Value: value}}}
	if !t.Passed {
		c.Failure = &junitProblem{Type: "threshold_failed",
			Message: fmt.Sprintf("%s is %s: %s does not hold", t.Metric, value, t.Expr)}
	}
	return c
}
