// Package logstub stands in for CloudWatch Logs' FilterLogEvents on loopback, where no emulator of it exists to
// use: one log group whose events are the JSON lines a source gives (the router's stdout), each stamped with its
// own "time" field. Its wire protocol is the AWS SDK's (JSON 1.1, X-Amz-Target Logs_20140328.FilterLogEvents).
//
// What CloudWatch Logs does that the stub does not: a line is searchable seconds after Lambda writes it, and is
// stamped when ingested; events come from many log streams, over pages; and the filter pattern language is
// richer than the one form the stub understands, equalities joined by ||, { $.key = "value" || ... } (it refuses
// any other).
package logstub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Server is the running stub.
type Server struct {
	URL   string
	srv   *httptest.Server
	group string
	lines func() []string
}

// Start serves the log group named group, whose lines are lines().
func Start(group string, lines func() []string) *Server {
	s := &Server{group: group, lines: lines}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the stub.
func (s *Server) Close() { s.srv.Close() }

var equalsRE = regexp.MustCompile(`^\s*\$\.([A-Za-z0-9_]+)\s*=\s*"([^"]*)"\s*$`)

// parsePattern reads a JSON filter pattern of equalities joined by ||, { $.a = "x" || $.b = "y" }: its terms, each
// a key and the value it must have ("Filter pattern syntax for metric filters, subscription filters, and filter log
// events", JSON log events, https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html).
func parsePattern(p string) ([][2]string, bool) {
	p = strings.TrimSpace(p)
	if !strings.HasPrefix(p, "{") || !strings.HasSuffix(p, "}") {
		return nil, false
	}
	var terms [][2]string
	for _, t := range strings.Split(p[1:len(p)-1], "||") {
		m := equalsRE.FindStringSubmatch(t)
		if m == nil {
			return nil, false
		}
		terms = append(terms, [2]string{m[1], m[2]})
	}
	return terms, true
}

type event struct {
	EventID       string `json:"eventId"`
	IngestionTime int64  `json:"ingestionTime"`
	LogStreamName string `json:"logStreamName"`
	Message       string `json:"message"`
	Timestamp     int64  `json:"timestamp"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	fail := func(code, msg string) {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
	}
	if target := r.Header.Get("X-Amz-Target"); target != "Logs_20140328.FilterLogEvents" {
		fail("UnknownOperationException", "the stub serves FilterLogEvents only, not "+target)
		return
	}
	var in struct {
		LogGroupName  string `json:"logGroupName"`
		FilterPattern string `json:"filterPattern"`
		StartTime     int64  `json:"startTime"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail("InvalidParameterException", err.Error())
		return
	}
	if in.LogGroupName != s.group {
		fail("ResourceNotFoundException", "The specified log group does not exist.")
		return
	}
	terms, ok := parsePattern(in.FilterPattern)
	if !ok {
		fail("InvalidParameterException", fmt.Sprintf("the stub understands { $.key = \"value\" || ... } only, not %q", in.FilterPattern))
		return
	}
	out := struct {
		Events             []event `json:"events"`
		SearchedLogStreams []any   `json:"searchedLogStreams"`
	}{Events: []event{}, SearchedLogStreams: []any{}}
	for i, line := range s.lines() {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || !slices.ContainsFunc(terms, func(t [2]string) bool { return fmt.Sprint(rec[t[0]]) == t[1] }) {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["time"]))
		if err != nil || at.UnixMilli() < in.StartTime {
			continue
		}
		out.Events = append(out.Events, event{
			EventID: fmt.Sprint(i), IngestionTime: at.UnixMilli(), LogStreamName: "stub", Message: line, Timestamp: at.UnixMilli(),
		})
	}
	_ = json.NewEncoder(w).Encode(out)
}
