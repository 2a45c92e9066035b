// Package stsstub stands in for STS's AssumeRole and GetCallerIdentity on loopback, where no emulator of it exists to
// use. Its wire protocol is the AWS SDK's (the query protocol, Action=AssumeRole, an XML answer): it issues session
// credentials whose access key names the role's account and session (caller.SessionKey, with the role's unique
// ID when RoleID is set), valid for an hour, and counts the calls per role.
//
// What STS does that the stub does not: it evaluates the role's trust policy and the caller's identity policy
// (the stub only checks the caller is the one account allowed to assume each role, and that a session of a role whose
// trust requires one has a source identity: the IAM matrix judges the policies), signs and checks requests, and enforces
// session duration and name rules.
package stsstub

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/queryproto"
)

// Server is the running stub.
type Server struct {
	URL string
	srv *httptest.Server

	mu      sync.Mutex
	latency time.Duration     // added to every call (SetLatency)
	allowed map[string]string // role ARN -> the account whose credentials may assume it
	fail    map[string]int    // role ARN -> AssumeRole calls still to refuse
	calls   map[string]int    // role ARN -> AssumeRole calls
	roleID  func(roleARN string) string
	name    func(account, roleID string) string
	// sourceIdentity are the roles whose trust requires a source identity (RequireSourceIdentity); identities, the
	// source identity each session was opened with, by its access key.
	sourceIdentity map[string]bool
	identities     map[string]string
}

// RequireSourceIdentity makes role's AssumeRole refuse a request without SourceIdentity, as a trust policy conditioned
// on sts:SourceIdentity does ("Monitor and control actions taken with assumed roles": AccessDenied).
func (s *Server) RequireSourceIdentity(role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sourceIdentity[role] = true
}

// SourceIdentity is the source identity the session of access key key was opened with ("" none), as CloudTrail records
// it on every call of the session.
func (s *Server) SourceIdentity(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.identities[key]
}

// SetRoleNames makes GetCallerIdentity name a session's role as name answers it (the IAM stub's Name).
func (s *Server) SetRoleNames(name func(account, roleID string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
}

// SetRoleIDs makes the sessions issued for a role carry its unique ID as id answers it (the IAM stub's).
func (s *Server) SetRoleIDs(id func(roleARN string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roleID = id
}

// Start serves AssumeRole of each role of roles (role ARN -> the caller account allowed to assume it); the
// caller's account is that of its access key (caller.Account), def when the key names none.
func Start(roles map[string]string, def string) *Server {
	s := &Server{allowed: roles, fail: map[string]int{}, calls: map[string]int{}, sourceIdentity: map[string]bool{}, identities: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, def) }))
	s.URL = s.srv.URL
	return s
}

// Allow lets account's credentials assume role from now on (on), or no longer (off): a reader role's trust fixed,
// or not yet.
func (s *Server) Allow(role, account string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.allowed[role] = account
		return
	}
	delete(s.allowed, role)
}

// SetLatency adds d to every call from now on, as a real endpoint's round trip would (the storm's figures).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Close stops the stub.
func (s *Server) Close() { s.srv.Close() }

// Fail makes the next n AssumeRole calls for role fail, as STS answers when it cannot issue credentials.
func (s *Server) Fail(role string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[role] = n
}

// Calls is how many AssumeRole calls role got.
func (s *Server) Calls(role string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[role]
}

type credentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type response struct {
	XMLName xml.Name `xml:"AssumeRoleResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials     credentials `xml:"Credentials"`
		AssumedRoleUser struct {
			Arn           string `xml:"Arn"`
			AssumedRoleID string `xml:"AssumedRoleId"`
		} `xml:"AssumedRoleUser"`
	} `xml:"AssumeRoleResult"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, def string) {
	s.mu.Lock()
	d := s.latency
	s.mu.Unlock()
	time.Sleep(d)
	if r.ParseForm() == nil && r.PostForm.Get("Action") == "GetCallerIdentity" {
		s.whoami(w, r, def)
		return
	}
	form, ok := queryproto.Action(w, r, xmlns, "AssumeRole")
	if !ok {
		return
	}
	role, session, si := form.Get("RoleArn"), form.Get("RoleSessionName"), form.Get("SourceIdentity")
	from := caller.Account(r, def)
	s.mu.Lock()
	s.calls[role]++
	allowed, known := s.allowed[role]
	roleID := "AROASTUB"
	if s.roleID != nil {
		roleID = s.roleID(role)
	}
	failing := s.fail[role] > 0
	if failing {
		s.fail[role]--
	}
	needsIdentity := s.sourceIdentity[role]
	s.mu.Unlock()
	switch {
	case failing:
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected")
		return
	case !known || allowed != from || session == "" || needsIdentity && si == "":
		writeError(w, http.StatusForbidden, "AccessDenied", fmt.Sprintf("User in %s is not authorized to perform sts:AssumeRole on resource %s", from, role))
		return
	case strings.HasPrefix(strings.ToLower(si), "aws:"):
		// "You cannot use a value that begins with the text aws:" (AssumeRole, SourceIdentity).
		writeError(w, http.StatusBadRequest, "ValidationError", "SourceIdentity must not begin with aws:")
		return
	}
	account := contract.AccountOfRole(role)
	var resp response
	resp.Xmlns = xmlns
	resp.Result.Credentials = credentials{
		AccessKeyID: caller.SessionKey(account, roleID, session), SecretAccessKey: "stub", SessionToken: "stub-" + session,
		Expiration: time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
	}
	if si != "" {
		s.mu.Lock()
		s.identities[resp.Result.Credentials.AccessKeyID] = si
		s.mu.Unlock()
	}
	resp.Result.AssumedRoleUser.Arn = "arn:aws:sts::" + account + ":assumed-role/" + role[strings.LastIndex(role, "/")+1:] + "/" + session
	resp.Result.AssumedRoleUser.AssumedRoleID = roleID + ":" + session
	resp.RequestID = "stub"
	queryproto.WriteResult(w, resp)
}

// whoami answers GetCallerIdentity: for a role's session its assumed-role ARN and "<role ID>:<session>", as STS
// does; for any other key, the account's root-like user.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request, def string) {
	type result struct {
		XMLName   xml.Name `xml:"GetCallerIdentityResponse"`
		Xmlns     string   `xml:"xmlns,attr"`
		Arn       string   `xml:"GetCallerIdentityResult>Arn"`
		UserID    string   `xml:"GetCallerIdentityResult>UserId"`
		Account   string   `xml:"GetCallerIdentityResult>Account"`
		RequestID string   `xml:"ResponseMetadata>RequestId"`
	}
	res := result{Xmlns: xmlns, RequestID: "stub", Account: caller.Account(r, def)}
	res.Arn, res.UserID = "arn:aws:iam::"+res.Account+":user/stub", "AIDA"+res.Account
	if id, ok := caller.Session(r); ok {
		s.mu.Lock()
		name := "unknown"
		if s.name != nil {
			name = s.name(id.Account, id.RoleID)
		}
		s.mu.Unlock()
		res.Account, res.UserID = id.Account, id.RoleID+":"+id.Session
		res.Arn = "arn:aws:sts::" + id.Account + ":assumed-role/" + name + "/" + id.Session
	}
	queryproto.WriteResult(w, res)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	queryproto.WriteError(w, xmlns, status, code, msg)
}

// xmlns is the service's XML namespace.
const xmlns = "https://sts.amazonaws.com/doc/2011-06-15/"
