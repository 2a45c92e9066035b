// Package s3stub stands in for what the bus asks of S3, on loopback, where no emulator of its Object Lock exists to
// use: PutObject (conditional, with Object Lock's default retention and its checksum requirement), GetObject,
// ListObjectsV2, ListObjectVersions, DeleteObject (a version, or a delete marker) and ListBuckets (by prefix), path-style, as the AWS SDK for Go sends them to an
// endpoint that is an IP address. Each is shaped as the Amazon S3 API reference documents it; the bucket's policy is
// the archive's (infra/component/bus.ArchivePolicy), enforced as S3 would evaluate it for these calls.
//
// What S3 does that the stub does not: it evaluates policies in general (the IAM matrix judges the archive's), checks
// signatures, keeps ACLs, storage classes, encryption and legal holds, pages versions, and runs lifecycle rules. What
// it refuses that the stub refuses too:
//   - any call naming another owner than the bucket's (x-amz-expected-bucket-owner): 403 AccessDenied ("Verifying bucket
//     ownership with bucket owner condition");
//   - GetObject of a key whose current version is a delete marker: 404 NoSuchKey with x-amz-delete-marker: true
//     ("Working with delete markers");
//   - PutObject with If-None-Match: * over an existing object: 412 PreconditionFailed ("PutObject", If-None-Match;
//     "How to prevent object overwrites with conditional writes"); any other If-None-Match value: 501 NotImplemented;
//   - PutObject to a bucket with Object Lock without Content-MD5 or an x-amz-checksum-* header: 400 InvalidRequest
//     ("PutObject": "The Content-MD5 or x-amz-sdk-checksum-algorithm header is required for any request to upload an
//     object with a retention period configured using Amazon S3 Object Lock"); a checksum that does not match: 400
//     BadDigest;
//   - DeleteObject of a version under retention: 403 AccessDenied, in compliance mode always, in governance mode unless
//     x-amz-bypass-governance-retention: true and the policy lets the caller bypass ("Object Lock", retention modes);
//   - what the archive's policy denies: a PutObject by anyone but its writer or without If-None-Match, a DeleteObject of
//     any kind, a bypass of governance retention: 403 AccessDenied.
package s3stub

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

// Retention is a bucket's default Object Lock retention: Mode GOVERNANCE or COMPLIANCE, for Days.
type Retention struct {
	Mode string
	Days int
}

// Policy is what the bucket's policy decides of the calls the stub serves (the archive's, ArchivePolicy).
type Policy struct {
	// Writer is the unique ID of the one role whose sessions may put objects ("" anyone).
	Writer string
	// Conditional: a PutObject without If-None-Match is denied.
	Conditional bool
	// NoDeletes: every DeleteObject is denied, a version's or a delete marker's, and every bypass of governance
	// retention.
	NoDeletes bool
}

// Server is the running stub.
type Server struct {
	URL string
	srv *httptest.Server

	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time
	seq     int
	calls   map[string]int
	// stall, when set, holds every call until it is closed (or the client gives up): S3 in a brownout. gaveUp is when
	// a client first gave up on a held call.
	stall  chan struct{}
	gaveUp time.Time
}

// Stall holds every call from now until the returned function is called: S3 answering nothing for a while.
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

// GaveUp is when a client first gave up on a call a stall held (the zero time if none has).
func (s *Server) GaveUp() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gaveUp
}

type bucket struct {
	owner   string
	lock    *Retention
	policy  Policy
	objects map[string][]*version // key -> its versions, oldest first
}

type version struct {
	id           string
	body         []byte
	mode         string
	until        time.Time
	deleteMarker bool
}

// Start runs the stub.
func Start() *Server {
	s := &Server{buckets: map[string]*bucket{}, now: time.Now, calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the stub.
func (s *Server) Close() { s.srv.Close() }

// SetClock makes the stub's clock now (retention runs out by it).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// CreateBucket creates a versioned bucket of account owner, with Object Lock's default retention lock when it is not
// nil, under policy.
func (s *Server) CreateBucket(name, owner string, lock *Retention, policy Policy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buckets[name] = &bucket{owner: owner, lock: lock, policy: policy, objects: map[string][]*version{}}
}

// Hide puts a delete marker over key in bucket, as a DeleteObject without a version does, whatever the policy says:
// what someone who lifted the bucket's policy can do.
func (s *Server) Hide(name, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.buckets[name]; b != nil {
		s.seq++
		b.objects[key] = append(b.objects[key], &version{id: "v" + strconv.Itoa(s.seq), deleteMarker: true})
	}
}

// Keys are the keys of bucket's objects whose latest version is no delete marker, sorted.
func (s *Server) Keys(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if b := s.buckets[name]; b != nil {
		for k, vs := range b.objects {
			if !vs[len(vs)-1].deleteMarker {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Object is the latest version of key in bucket, nil when there is none.
func (s *Server) Object(name, key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.buckets[name]; b != nil {
		if vs := b.objects[key]; len(vs) > 0 && !vs[len(vs)-1].deleteMarker {
			return vs[len(vs)-1].body
		}
	}
	return nil
}

// VersionIDs are the IDs of key's versions in bucket, oldest first.
func (s *Server) VersionIDs(name, key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if b := s.buckets[name]; b != nil {
		for _, v := range b.objects[key] {
			out = append(out, v.id)
		}
	}
	return out
}

// Versions is how many versions key has in bucket, delete markers included.
func (s *Server) Versions(name, key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.buckets[name]; b != nil {
		return len(b.objects[key])
	}
	return 0
}

// Calls is how many calls of action ("PutObject", ...) were served.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}

type s3Error struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(s3Error{Code: code, Message: msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	name, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	s.mu.Lock()
	if gate := s.stall; gate != nil {
		s.mu.Unlock()
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
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if name == "" && r.Method == http.MethodGet {
		s.calls["ListBuckets"]++
		s.listBuckets(w, r)
		return
	}
	b := s.buckets[name]
	if b == nil {
		fail(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return
	}
	if expected := r.Header.Get("x-amz-expected-bucket-owner"); expected != "" && expected != b.owner {
		fail(w, http.StatusForbidden, "AccessDenied", "Access Denied")
		return
	}
	switch {
	case r.Method == http.MethodPut && key != "":
		s.calls["PutObject"]++
		s.put(w, r, b, key)
	case r.Method == http.MethodGet && key != "":
		s.calls["GetObject"]++
		vs := b.objects[key]
		if id := r.URL.Query().Get("versionId"); id != "" { // that version, whatever is current
			i := slices.IndexFunc(vs, func(v *version) bool { return v.id == id })
			if i < 0 || vs[i].deleteMarker {
				fail(w, http.StatusNotFound, "NoSuchVersion", "The specified version does not exist.")
				return
			}
			w.Header().Set("x-amz-version-id", id)
			_, _ = w.Write(vs[i].body)
			return
		}
		if len(vs) > 0 && vs[len(vs)-1].deleteMarker {
			w.Header().Set("x-amz-delete-marker", "true")
			w.Header().Set("x-amz-version-id", vs[len(vs)-1].id)
		}
		if len(vs) == 0 || vs[len(vs)-1].deleteMarker {
			fail(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
			return
		}
		w.Header().Set("x-amz-version-id", vs[len(vs)-1].id)
		_, _ = w.Write(vs[len(vs)-1].body)
	case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
		s.calls["ListObjectsV2"]++
		s.list(w, r, b, name)
	case r.Method == http.MethodGet && r.URL.Query().Has("versions"):
		s.calls["ListObjectVersions"]++
		s.listVersions(w, r, b, name)
	case r.Method == http.MethodDelete && key != "":
		s.calls["DeleteObject"]++
		s.delete(w, r, b, key)
	default:
		fail(w, http.StatusNotImplemented, "NotImplemented", "A header or query you provided implies functionality that is not implemented")
	}
}

func (s *Server) put(w http.ResponseWriter, r *http.Request, b *bucket, key string) {
	body, _ := io.ReadAll(r.Body)
	who, isSession := caller.Session(r)
	match := r.Header.Get("If-None-Match")
	switch {
	case b.policy.Writer != "" && (!isSession || who.RoleID != b.policy.Writer):
		fail(w, http.StatusForbidden, "AccessDenied", "explicit deny in a resource-based policy: s3:PutObject")
		return
	case b.policy.Conditional && match == "":
		fail(w, http.StatusForbidden, "AccessDenied", "explicit deny in a resource-based policy: s3:PutObject without If-None-Match")
		return
	case match != "" && match != "*":
		fail(w, http.StatusNotImplemented, "NotImplemented", "If-None-Match takes * only")
		return
	case b.lock != nil && r.Header.Get("Content-MD5") == "" && !hasChecksum(r.Header):
		fail(w, http.StatusBadRequest, "InvalidRequest", "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters")
		return
	}
	if why := badDigest(r.Header, body); why != "" {
		fail(w, http.StatusBadRequest, "BadDigest", why)
		return
	}
	vs := b.objects[key]
	if match == "*" && len(vs) > 0 && !vs[len(vs)-1].deleteMarker {
		fail(w, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
		return
	}
	s.seq++
	v := &version{id: "v" + strconv.Itoa(s.seq), body: body}
	if b.lock != nil {
		v.mode, v.until = b.lock.Mode, s.now().Add(time.Duration(b.lock.Days)*24*time.Hour)
	}
	b.objects[key] = append(vs, v)
	w.Header().Set("x-amz-version-id", v.id)
	w.WriteHeader(http.StatusOK)
}

func hasChecksum(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
			return true
		}
	}
	return false
}

// badDigest is why the body does not match the digest the request gives (Content-MD5, x-amz-checksum-crc32), "" when
// it matches or gives none the stub reads.
func badDigest(h http.Header, body []byte) string {
	if m := h.Get("Content-MD5"); m != "" {
		sum := md5.Sum(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != m {
			return "The Content-MD5 you specified did not match what we received."
		}
	}
	if c := h.Get("X-Amz-Checksum-Crc32"); c != "" {
		var sum [4]byte
		binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(body))
		if base64.StdEncoding.EncodeToString(sum[:]) != c {
			return "The CRC32 you specified did not match the calculated checksum."
		}
	}
	if c := h.Get("X-Amz-Checksum-Sha256"); c != "" {
		sum := sha256.Sum256(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != c {
			return "The SHA256 you specified did not match the calculated checksum."
		}
	}
	return ""
}

type listAllMyBuckets struct {
	XMLName xml.Name `xml:"ListAllMyBucketsResult"`
	Buckets []struct {
		Name         string `xml:"Name"`
		CreationDate string `xml:"CreationDate"`
	} `xml:"Buckets>Bucket"`
	Prefix string `xml:"Prefix,omitempty"`
}

// listBuckets answers ListBuckets: every bucket whose name starts with the prefix asked, by name, in one page (S3 pages
// by max-buckets, which the command does not set).
func (s *Server) listBuckets(w http.ResponseWriter, r *http.Request) {
	prefix := r.URL.Query().Get("prefix")
	res := listAllMyBuckets{Prefix: prefix}
	names := slices.Sorted(maps.Keys(s.buckets))
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			res.Buckets = append(res.Buckets, struct {
				Name         string `xml:"Name"`
				CreationDate string `xml:"CreationDate"`
			}{n, "2026-11-27T00:00:00.000Z"})
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = fmt.Fprint(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(res)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, b *bucket, key string) {
	if b.policy.NoDeletes {
		fail(w, http.StatusForbidden, "AccessDenied", "explicit deny in a resource-based policy: s3:DeleteObject")
		return
	}
	vs := b.objects[key]
	id := r.URL.Query().Get("versionId")
	if id == "" { // a versioned bucket keeps the versions and adds a delete marker
		s.seq++
		b.objects[key] = append(vs, &version{id: "v" + strconv.Itoa(s.seq), deleteMarker: true})
		w.WriteHeader(http.StatusNoContent)
		return
	}
	i := slices.IndexFunc(vs, func(v *version) bool { return v.id == id })
	if i < 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	v := vs[i]
	bypass := r.Header.Get("x-amz-bypass-governance-retention") == "true"
	if v.until.After(s.now()) && (v.mode == "COMPLIANCE" || v.mode == "GOVERNANCE" && !bypass) {
		fail(w, http.StatusForbidden, "AccessDenied", "Access Denied because object protected by object lock.")
		return
	}
	b.objects[key] = slices.Delete(vs, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

type listResult struct {
	XMLName               xml.Name  `xml:"ListBucketResult"`
	Name                  string    `xml:"Name"`
	Prefix                string    `xml:"Prefix"`
	KeyCount              int       `xml:"KeyCount"`
	MaxKeys               int       `xml:"MaxKeys"`
	IsTruncated           bool      `xml:"IsTruncated"`
	NextContinuationToken string    `xml:"NextContinuationToken,omitempty"`
	Contents              []content `xml:"Contents"`
}

type content struct {
	Key  string `xml:"Key"`
	Size int    `xml:"Size"`
}

// list answers ListObjectsV2: the keys under prefix after the continuation token (a key, here), at most max-keys
// (1,000 unless fewer are asked) a page.
func (s *Server) list(w http.ResponseWriter, r *http.Request, b *bucket, name string) {
	q := r.URL.Query()
	prefix, after := q.Get("prefix"), q.Get("continuation-token")
	most := 1000
	if m, err := strconv.Atoi(q.Get("max-keys")); err == nil && m > 0 && m < most {
		most = m
	}
	var keys []string
	for k, vs := range b.objects {
		if strings.HasPrefix(k, prefix) && k > after && !vs[len(vs)-1].deleteMarker {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	res := listResult{Name: name, Prefix: prefix, MaxKeys: most}
	for i, k := range keys {
		if i == most {
			res.IsTruncated, res.NextContinuationToken = true, keys[i-1]
			break
		}
		vs := b.objects[k]
		res.Contents = append(res.Contents, content{Key: k, Size: len(vs[len(vs)-1].body)})
	}
	res.KeyCount = len(res.Contents)
	w.Header().Set("Content-Type", "application/xml")
	_, _ = fmt.Fprint(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(res)
}

type versionsResult struct {
	XMLName       xml.Name     `xml:"ListVersionsResult"`
	Name          string       `xml:"Name"`
	Prefix        string       `xml:"Prefix"`
	IsTruncated   bool         `xml:"IsTruncated"`
	Versions      []versionXML `xml:"Version"`
	DeleteMarkers []versionXML `xml:"DeleteMarker"`
}

type versionXML struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId"`
	IsLatest  bool   `xml:"IsLatest"`
	Size      int    `xml:"Size,omitempty"`
}

// listVersions answers ListObjectVersions: every version and delete marker under prefix, in one page (the bus lists
// the few claims of one record).
func (s *Server) listVersions(w http.ResponseWriter, r *http.Request, b *bucket, name string) {
	prefix := r.URL.Query().Get("prefix")
	res := versionsResult{Name: name, Prefix: prefix}
	for _, k := range slices.Sorted(maps.Keys(b.objects)) {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		vs := b.objects[k]
		for i := len(vs) - 1; i >= 0; i-- {
			v := versionXML{Key: k, VersionID: vs[i].id, IsLatest: i == len(vs)-1, Size: len(vs[i].body)}
			if vs[i].deleteMarker {
				res.DeleteMarkers = append(res.DeleteMarkers, v)
			} else {
				res.Versions = append(res.Versions, v)
			}
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = fmt.Fprint(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(res)
}
