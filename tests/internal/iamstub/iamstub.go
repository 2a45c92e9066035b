// Package iamstub stands in for IAM's GetRole on loopback, where no emulator of it exists to use, and holds the
// roles of every account with their unique IDs, which the STS stub gives the sessions it issues (so the SQS
// emulator stamps a session's SenderId with its role's ID, as SQS does). Its wire protocol is the AWS SDK's (the
// query protocol, Action=GetRole, an XML answer; NoSuchEntity and AccessDenied as IAM answers them).
//
// What IAM does that the stub does not: it evaluates the caller's identity policy (the stub answers any caller of
// the role's own account; the IAM matrix judges the reader role's grant of iam:GetRole on its forwarder alone),
// signs and checks requests, and is eventually consistent (a role just created may not be seen at once). Like IAM,
// it answers only about roles of the caller's own account, a role created again gets a new unique ID, and GetRole
// gives the time the role was created (CreateDate), which the sender check judges a message's send time against.
package iamstub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/queryproto"
)

// Server is the running stub.
type Server struct {
	URL string
	srv *httptest.Server
	def string // the account of a request whose key names none

	mu     sync.Mutex
	roles  map[string]string    // "<account>/<name>" -> unique ID
	born   map[string]time.Time // "<account>/<name>" -> when it was created (GetRole's CreateDate)
	denied map[string]bool      // accounts whose callers may not read their roles
	calls  map[string]int       // "<account>/<name>" -> GetRole calls
}

// Start serves GetRole; a request whose credentials name no account is def's.
func Start(def string) *Server {
	s := &Server{def: def, roles: map[string]string{}, born: map[string]time.Time{}, denied: map[string]bool{}, calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the stub.
func (s *Server) Close() { s.srv.Close() }

// Create creates role name in account, or creates it again (deleting the one of that name), with a new unique ID,
// which it returns.
func (s *Server) Create(account, name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "AROA" + strings.ToUpper(hex.EncodeToString(b[:]))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[account+"/"+name] = id
	s.born[account+"/"+name] = time.Now()
	return id
}

// Backdate sets the creation time of every role that exists now to when: roles a deployment created before the test
// began.
func (s *Server) Backdate(when time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.born {
		s.born[k] = when
	}
}

// Delete deletes role name of account, as IAM does: GetRole no longer finds it.
func (s *Server) Delete(account, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.roles, account+"/"+name)
	delete(s.born, account+"/"+name)
}

// Name is the name of the role of account whose unique ID is id, "" when there is none.
func (s *Server) Name(account, id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, rid := range s.roles {
		if a, name, _ := strings.Cut(key, "/"); a == account && rid == id {
			return name
		}
	}
	return ""
}

// ID is the unique ID of role name of account, which is created if it does not exist.
func (s *Server) ID(account, name string) string {
	s.mu.Lock()
	id, ok := s.roles[account+"/"+name]
	s.mu.Unlock()
	if ok {
		return id
	}
	return s.Create(account, name)
}

// IDOfARN is ID of a role ARN's account and name.
func (s *Server) IDOfARN(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 {
		return ""
	}
	return s.ID(parts[4], parts[5][strings.LastIndex(parts[5], "/")+1:])
}

// Deny makes GetRole of account's roles answer AccessDenied (on) or answer again (off), as IAM does to a caller
// whose policy does not allow it.
func (s *Server) Deny(account string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied[account] = on
}

// Calls is how many GetRole calls role name of account got.
func (s *Server) Calls(account, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[account+"/"+name]
}

type role struct {
	Path     string `xml:"Path"`
	RoleName string `xml:"RoleName"`
	RoleID   string `xml:"RoleId"`
	Arn      string `xml:"Arn"`
	Created  string `xml:"CreateDate"`
}

type response struct {
	XMLName   xml.Name `xml:"GetRoleResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Role      role     `xml:"GetRoleResult>Role"`
	RequestID string   `xml:"ResponseMetadata>RequestId"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	form, ok := queryproto.Action(w, r, xmlns, "GetRole")
	if !ok {
		return
	}
	name, account := form.Get("RoleName"), caller.Account(r, s.def)
	key := account + "/" + name
	s.mu.Lock()
	s.calls[key]++
	id, ok := s.roles[key]
	born := s.born[key]
	denied := s.denied[account]
	s.mu.Unlock()
	switch {
	case denied:
		writeError(w, http.StatusForbidden, "AccessDenied", fmt.Sprintf("User is not authorized to perform: iam:GetRole on resource: role %s", name))
		return
	case !ok:
		writeError(w, http.StatusNotFound, "NoSuchEntity", fmt.Sprintf("The role with name %s cannot be found.", name))
		return
	}
	resp := response{Xmlns: xmlns, RequestID: "stub", Role: role{
		Path: "/", RoleName: name, RoleID: id, Arn: "arn:aws:iam::" + account + ":role/" + name, Created: born.UTC().Format(time.RFC3339), // to the second, as IAM gives it
	}}
	queryproto.WriteResult(w, resp)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	queryproto.WriteError(w, xmlns, status, code, msg)
}

// xmlns is the service's XML namespace.
const xmlns = "https://iam.amazonaws.com/doc/2010-05-08/"
