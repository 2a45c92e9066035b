// Package ec2stub is a minimal EC2 endpoint speaking the real query protocol for the one call the router makes,
// DescribeInstances, so the real AWS SDK client can be driven against it. No EC2 emulator exists to use instead.
// Each account's instances are seen only with that account's credentials (caller.Account), as in EC2; unlike
// EC2 it checks no permission (the IAM matrix judges the policies).
package ec2stub

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

// Account is the account of callers whose credentials name none (the router's own, in the tests).
const Account = "123456789012"

// Server is a running stub.
type Server struct {
	URL string
	srv *httptest.Server

	mu        sync.Mutex
	latency   time.Duration                // added to every call (SetLatency)
	tags      map[string]map[string]string // "<account>/<instance id>" -> tags
	throttled int                          // calls still to answer RequestLimitExceeded; -1 for all
	calls     int
	byAccount map[string]int // calls per caller account
}

// Start serves the stub on a loopback port until Close.
func Start() *Server {
	s := &Server{tags: map[string]map[string]string{}, byAccount: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// SetLatency adds d to every call from now on, as a real endpoint's round trip would (the storm's figures).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Close stops the stub.
func (s *Server) Close() { s.srv.Close() }

// Client returns an EC2 client of the real AWS SDK pointed at the stub.
func (s *Server) Client() *ec2.Client {
	return ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL), Credentials: aws.AnonymousCredentials{}, APIOptions: sdkbody.APIOptions})
}

// Put makes instance id exist with tags.
func (s *Server) Put(id string, tags map[string]string) { s.PutIn(Account, id, tags) }

// PutIn adds or replaces an instance of account with its tags: only callers with that account's credentials
// (caller.Account) see it, as DescribeInstances shows only the caller's account's instances.
func (s *Server) PutIn(account, id string, tags map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tags[account+"/"+id] = tags
}

// CallsFrom is how many DescribeInstances calls account's credentials made.
func (s *Server) CallsFrom(account string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byAccount[account]
}

// Throttle answers the next n calls with RequestLimitExceeded (HTTP 503); -1 throttles until Throttle(0).
func (s *Server) Throttle(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttled = n
}

// Calls returns how many DescribeInstances calls arrived, throttled ones included.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d := s.latency
	s.mu.Unlock()
	time.Sleep(d)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "MalformedQueryString", err.Error())
		return
	}
	if a := r.PostForm.Get("Action"); a != "DescribeInstances" {
		writeError(w, http.StatusBadRequest, "InvalidAction", fmt.Sprintf("the action %s is not valid for this web service", a))
		return
	}
	from := caller.Account(r, Account)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.byAccount[from]++
	if s.throttled != 0 {
		if s.throttled > 0 {
			s.throttled--
		}
		writeError(w, http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
		return
	}
	byFilter, byID, err := ids(r.PostForm)
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidParameterValue", err.Error())
		return
	}
	var found []string
	for _, id := range byID {
		if _, ok := s.tags[from+"/"+id]; !ok {
			// As EC2 does: one unknown id in InstanceIds fails the whole call.
			writeError(w, http.StatusBadRequest, "InvalidInstanceID.NotFound", fmt.Sprintf("The instance ID '%s' does not exist", id))
			return
		}
		found = append(found, id)
	}
	for _, id := range byFilter {
		if _, ok := s.tags[from+"/"+id]; ok {
			found = append(found, id)
		}
	}
	sort.Strings(found)
	// Pagination by MaxResults/NextToken, as the SDK's paginator expects.
	start, _ := strconv.Atoi(r.PostForm.Get("NextToken"))
	page := len(found)
	if mr, err := strconv.Atoi(r.PostForm.Get("MaxResults")); err == nil && mr > 0 {
		page = mr
	}
	end := min(start+page, len(found))
	resp := response{Xmlns: "http://ec2.amazonaws.com/doc/2016-11-15/", RequestID: "stub"}
	if start < end {
		res := reservation{ID: "r-0stub", Owner: from}
		for _, id := range found[start:end] {
			inst := instance{ID: id, State: state{Code: 16, Name: "running"}}
			tags := s.tags[from+"/"+id]
			keys := make([]string, 0, len(tags))
			for k := range tags {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				inst.Tags = append(inst.Tags, tag{Key: k, Value: tags[k]})
			}
			res.Instances = append(res.Instances, inst)
		}
		resp.Reservations = []reservation{res}
	}
	if end < len(found) {
		resp.NextToken = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(resp)
}

// ids reads the instance-id filter values and InstanceId.N parameters of a query-protocol request.
func ids(form map[string][]string) (byFilter, byID []string, err error) {
	filterIdx := map[string]bool{}
	for k, v := range form {
		switch {
		case strings.HasPrefix(k, "InstanceId."):
			byID = append(byID, v[0])
		case strings.HasPrefix(k, "Filter.") && strings.HasSuffix(k, ".Name"):
			if v[0] != "instance-id" {
				return nil, nil, fmt.Errorf("the stub supports only the instance-id filter, not %q", v[0])
			}
			filterIdx[strings.TrimSuffix(k, "Name")] = true
		}
	}
	for k, v := range form {
		if i := strings.Index(k, ".Value."); i > 0 && filterIdx[k[:i+1]] {
			byFilter = append(byFilter, v[0])
		}
	}
	if len(byFilter) > 200 {
		return nil, nil, fmt.Errorf("the filter has %d values, more than 200", len(byFilter))
	}
	sort.Strings(byFilter)
	sort.Strings(byID)
	return byFilter, byID, nil
}

type response struct {
	XMLName      xml.Name      `xml:"DescribeInstancesResponse"`
	Xmlns        string        `xml:"xmlns,attr"`
	RequestID    string        `xml:"requestId"`
	Reservations []reservation `xml:"reservationSet>item"`
	NextToken    string        `xml:"nextToken,omitempty"`
}

type reservation struct {
	ID        string     `xml:"reservationId"`
	Owner     string     `xml:"ownerId"`
	Instances []instance `xml:"instancesSet>item"`
}

type instance struct {
	ID    string `xml:"instanceId"`
	State state  `xml:"instanceState"`
	Tags  []tag  `xml:"tagSet>item"`
}

type state struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type errorResponse struct {
	XMLName   xml.Name `xml:"Response"`
	Errors    []apiErr `xml:"Errors>Error"`
	RequestID string   `xml:"RequestID"`
}

type apiErr struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// writeError answers as EC2's query protocol does.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(errorResponse{Errors: []apiErr{{Code: code, Message: msg}}, RequestID: "stub"})
}
