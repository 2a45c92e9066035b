// Package kmsemu runs local-kms (github.com/nsmithuk/local-kms), a Go emulator of AWS KMS that signs with real ECDSA
// keys, in-process on loopback, behind a middleware that refuses what the seal key's policy refuses
// (infra/component/bus.SealKeyPolicy): kms:Sign by any principal but a session of the one role allowed, as KMS answers
// an explicit Deny ("AccessDeniedException ... with an explicit deny in a resource-based policy").
//
// What KMS does that the stand-in does not: it evaluates every key policy and IAM policy (the IAM matrix judges
// them), signs and checks requests, counts request quotas, and refuses a key policy that would lock its caller out.
// What local-kms does: CreateKey, Sign, Verify, GetPublicKey, GenerateMac, VerifyMac, and the rest of KMS's API, as
// the API reference documents them, on keys of its own in a LevelDB store.
package kmsemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	lkconfig "github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
	"github.com/nsmithuk/local-kms/src/handler"
	"github.com/sirupsen/logrus"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

// Server is the running emulator.
type Server struct {
	URL string
	srv *httptest.Server
	db  *data.Database
	dir string

	mu      sync.Mutex
	signers map[string]string // key ID -> the ARN of the one role whose sessions may sign with it
	calls   map[string]int    // action -> calls
	name    func(account, roleID string) string
	stall   chan struct{} // when set, every call waits for it (or for its client to give up)
	gaveUp  time.Time     // when a client first gave up on a call the stall held
}

// GaveUp is when a client first gave up on a call a stall held (the zero time if none has).
func (s *Server) GaveUp() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gaveUp
}

// Stall holds every call from now until the returned function is called: KMS answering nothing for a while.
func (s *Server) Stall() (resume func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.stall = gate
	s.mu.Unlock()
	return sync.OnceFunc(func() {
		s.mu.Lock()
		s.stall = nil
		s.mu.Unlock()
		close(gate)
	})
}

// SetRoleNames makes the stand-in name a session's role as name answers it (the IAM stub's Name): the key's policy
// names its signer by ARN (aws:PrincipalArn), as a role's name, not its unique ID.
func (s *Server) SetRoleNames(name func(account, roleID string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
}

// quiet is local-kms's logger here: it logs every key made and every signature.
var quiet = &logrus.Logger{Out: io.Discard, Formatter: new(logrus.TextFormatter), Hooks: make(logrus.LevelHooks), Level: logrus.PanicLevel}

// Start runs local-kms for keys of account in region. local-kms keeps its account and region in package globals: every
// emulator of a process shares them.
func Start(account, region string) (*Server, error) {
	lkconfig.AWSAccountId, lkconfig.AWSRegion = account, region
	dir, err := os.MkdirTemp("", "kib-kms")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, db: data.NewDatabase(dir), signers: map[string]string{}, calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the emulator and removes its store.
func (s *Server) Close() {
	s.srv.Close()
	s.db.Close()
	_ = os.RemoveAll(s.dir)
}

// Client is a KMS client of the real SDK, signed with key (an access key caller reads), pointed at the emulator.
func (s *Server) Client(key string) *kms.Client {
	return kms.New(kms.Options{Region: lkconfig.AWSRegion, BaseEndpoint: aws.String(s.URL), APIOptions: sdkbody.APIOptions,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: key, SecretAccessKey: "stub", SessionToken: "stub"}, nil
		})})
}

// CreateSealKey creates a key as the stack declares the seal key (ECC_NIST_P256, SIGN_VERIFY), whose policy lets only
// sessions of the role signer (its ARN) sign, and returns its ARN.
func (s *Server) CreateSealKey(ctx context.Context, signer string) (string, error) {
	out, err := s.Client("AKIAKMSADMIN").CreateKey(ctx, &kms.CreateKeyInput{
		KeySpec: types.KeySpecEccNistP256, KeyUsage: types.KeyUsageTypeSignVerify, Description: aws.String("the seal key"),
	})
	if err != nil {
		return "", fmt.Errorf("creating the seal key: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signers[aws.ToString(out.KeyMetadata.KeyId)] = signer
	return aws.ToString(out.KeyMetadata.Arn), nil
}

// Calls is how many calls of action were served.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	action := r.Header.Get("X-Amz-Target")
	action = action[strings.LastIndex(action, ".")+1:]
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.calls[action]++
	gate := s.stall
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			s.mu.Lock()
			if s.gaveUp.IsZero() {
				s.gaveUp = time.Now()
			}
			s.mu.Unlock()
			return
		}
	}
	if action == "Sign" {
		var in struct{ KeyId string }
		_ = json.Unmarshal(body, &in)
		if why := s.refusesSign(r, in.KeyId); why != "" {
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"__type": "AccessDeniedException", "message": why})
			return
		}
	}
	s.handle(w, r, action)
}

// handle dispatches the request to local-kms's handler of action, as its own server does (src.HandleRequest, which
// logs to a logger of its own), with a logger that says nothing.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, action string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	method := reflect.ValueOf(handler.NewRequestHandler(r, quiet, s.db)).MethodByName(action)
	if !method.IsValid() {
		w.WriteHeader(http.StatusNotImplemented)
		fmt.Fprintf(w, "Passed X-Amz-Target (%s) is not implemented", r.Header.Get("X-Amz-Target"))
		return
	}
	res, ok := method.Call(nil)[0].Interface().(handler.Response)
	if !ok {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(res.Code)
	fmt.Fprint(w, res.Body)
}

// refusesSign is why KMS refuses the request r to sign with key (an ID or ARN), "" when it does not: the key's policy
// denies kms:Sign to every principal but the sessions of its signer.
func (s *Server) refusesSign(r *http.Request, key string) string {
	id := key[strings.LastIndex(key, "/")+1:]
	s.mu.Lock()
	signer, ok := s.signers[id]
	s.mu.Unlock()
	if !ok {
		return ""
	}
	who, isSession := caller.Session(r)
	s.mu.Lock()
	name := s.name
	s.mu.Unlock()
	if isSession && name != nil && signer == "arn:aws:iam::"+who.Account+":role/"+name(who.Account, who.RoleID) {
		return ""
	}
	principal := "the caller"
	if isSession {
		principal = who.RoleID + ":" + who.Session
	}
	return fmt.Sprintf("User: %s is not authorized to perform: kms:Sign on resource: %s with an explicit deny in a resource-based policy", principal, key)
}
