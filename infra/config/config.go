// Package config reads the stack configuration once into typed structs and validates all of it before any
// resource is declared. Every problem is reported at once, each with its path and reason
// ("clusters[2].name: duplicate of clusters[0]").
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// Namespace is the project's configuration namespace: keys are "karpenter-interruption-bus:<key>".
const Namespace = "karpenter-interruption-bus"

// Config is the validated stack configuration. README.md documents every key.
type Config struct {
	// Stack is the Pulumi stack name.
	Stack string
	// NamePrefix starts the physical name of every shared resource, so two stacks in one account and region do
	// not collide. Key namePrefix; default "kib-<stack>".
	NamePrefix string
	// QueuePrefix starts every cluster queue name. Key queuePrefix; default NamePrefix + "-".
	QueuePrefix  string
	Clusters     []Cluster
	Router       Router
	CentralQueue CentralQueue
	Alarms       Alarms
	Dashboard    bool
	Tags         map[string]string
}

// Cluster is one entry of clusters.
type Cluster struct {
	Name string `json:"name"`
}

// Router configures the router Lambda and its event source mapping (key router).
type Router struct {
	BatchSize                    int      `json:"batchSize"`
	MaximumBatchingWindowSeconds int      `json:"maximumBatchingWindowSeconds"`
	MaximumConcurrency           int      `json:"maximumConcurrency"`
	MemoryMB                     int      `json:"memoryMb"`
	TimeoutSeconds               int      `json:"timeoutSeconds"`
	LogRetentionDays             int      `json:"logRetentionDays"`
	LogLevel                     string   `json:"logLevel"`
	OwnerTagKeys                 []string `json:"ownerTagKeys"`
}

// CentralQueue configures the buffering queue and its dead-letter queue (key centralQueue).
type CentralQueue struct {
	MessageRetentionSeconds int `json:"messageRetentionSeconds"`
	MaxReceiveCount         int `json:"maxReceiveCount"`
	// EventMaxAgeSeconds bounds how long EventBridge keeps retrying delivery to the central queue.
	EventMaxAgeSeconds int `json:"eventMaxAgeSeconds"`
}

// Alarms configures the CloudWatch alarms (key alarms).
type Alarms struct {
	// TopicARN receives alarm and OK notifications when set.
	TopicARN string `json:"topicArn"`
	// OldestMessageAgeSeconds is the central queue's age alarm threshold.
	OldestMessageAgeSeconds int `json:"oldestMessageAgeSeconds"`
}

// Defaults.
var (
	DefaultRouter = Router{
		BatchSize: 100, MaximumBatchingWindowSeconds: 1, MaximumConcurrency: 5, MemoryMB: 256, TimeoutSeconds: 30,
		LogRetentionDays: 30, LogLevel: "info",
	}
	DefaultCentralQueue = CentralQueue{MessageRetentionSeconds: 3600, MaxReceiveCount: 5, EventMaxAgeSeconds: 300}
	DefaultAlarms       = Alarms{OldestMessageAgeSeconds: 60}
)

// logRetentionDays are the values CloudWatch Logs accepts.
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

var (
	namePrefixRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)
	snsARNRE     = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$`)
)

// MaxNamePrefix leaves room for the longest suffix ("-router-events" on a 64-character IAM role name).
const MaxNamePrefix = 40

// Error lists every problem of a configuration, one "path: reason" a line.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return fmt.Sprintf("invalid stack configuration (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// loader collects problems while decoding.
type loader struct{ problems []string }

func (l *loader) addf(path, format string, args ...any) {
	l.problems = append(l.problems, path+": "+fmt.Sprintf(format, args...))
}

// decode unmarshals the JSON text of path into v, rejecting unknown keys, matched exactly (encoding/json
// alone would accept "batchsize" for "batchSize").
func (l *loader) decode(path, text string, v any) bool {
	if !l.exactKeys(path, text, v) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return true
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		l.addf(path+"."+typeErr.Field, "must be %s, not a JSON %s", kindOf(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &typeErr):
		l.addf(path, "must be %s, not a JSON %s", kindOf(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		l.addf(path, "is not valid JSON: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		l.addf(path, "unknown key %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		l.addf(path, "%v", err)
	}
	return false
}

// exactKeys reports keys of the JSON object text that no json tag of the struct v points to names exactly.
func (l *loader) exactKeys(path, text string, v any) bool {
	t := reflect.TypeOf(v).Elem()
	if t.Kind() != reflect.Struct {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) != nil {
		return true // not an object: decode reports it
	}
	known := map[string]bool{}
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			known[tag] = true
		}
	}
	ok := true
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if known[k] {
			continue
		}
		ok = false
		hint := ""
		for want := range known {
			if strings.EqualFold(want, k) {
				hint = fmt.Sprintf(" (did you mean %q?)", want)
			}
		}
		l.addf(path, "unknown key %q%s", k, hint)
	}
	return ok
}

func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "an object"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	default:
		return "a number"
	}
}

// Load reads the configuration through get (a Pulumi config getter: key without namespace -> value, "" when
// unset; structured values are JSON text) for stack, and validates it.
func Load(stack string, get func(key string) string) (Config, error) {
	l := &loader{}
	c := Config{Stack: stack, Router: DefaultRouter, CentralQueue: DefaultCentralQueue, Alarms: DefaultAlarms}

	c.NamePrefix = get("namePrefix")
	if c.NamePrefix == "" {
		c.NamePrefix = "kib-" + stack
	}
	if len(c.NamePrefix) > MaxNamePrefix || !namePrefixRE.MatchString(c.NamePrefix) {
		l.addf("namePrefix", "%q must be 1 to %d letters, digits and '-', starting with a letter or digit (set namePrefix when the stack name does not fit)", c.NamePrefix, MaxNamePrefix)
	}
	c.QueuePrefix = get("queuePrefix")
	if c.QueuePrefix == "" {
		c.QueuePrefix = c.NamePrefix + "-"
	}
	if err := queuename.ValidatePrefix(c.QueuePrefix); err != nil {
		l.addf("queuePrefix", "%v", err)
	}

	if text := get("clusters"); text != "" {
		var raw []json.RawMessage
		if l.decode("clusters", text, &raw) {
			for i, r := range raw {
				path := fmt.Sprintf("clusters[%d]", i)
				var cl Cluster
				if l.decode(path, string(r), &cl) {
					c.Clusters = append(c.Clusters, cl)
				} else {
					c.Clusters = append(c.Clusters, Cluster{}) // keeps indexes aligned for later checks
				}
			}
		}
	}
	if text := get("router"); text != "" {
		l.decode("router", text, &c.Router)
	}
	if text := get("centralQueue"); text != "" {
		l.decode("centralQueue", text, &c.CentralQueue)
	}
	if text := get("alarms"); text != "" {
		l.decode("alarms", text, &c.Alarms)
	}
	if text := get("tags"); text != "" {
		l.decode("tags", text, &c.Tags)
	}
	if text := get("dashboard"); text != "" {
		l.decode("dashboard", text, &c.Dashboard)
	}

	l.validateClusters(c.Clusters)
	l.validateRouter(c.Router)
	l.validateCentralQueue(c.CentralQueue, c.Router)
	l.validateAlarms(c.Alarms)
	l.validateTags(c.Tags)
	if len(l.problems) > 0 {
		sort.Strings(l.problems)
		return Config{}, &Error{Problems: l.problems}
	}
	return c, nil
}

func (l *loader) validateClusters(clusters []Cluster) {
	first := map[string]int{}
	for i, cl := range clusters {
		path := fmt.Sprintf("clusters[%d].name", i)
		if cl.Name == "" {
			l.addf(path, "is required")
			continue
		}
		if err := queuename.ValidateCluster(cl.Name); err != nil {
			l.addf(path, "%v", err)
		}
		if j, dup := first[cl.Name]; dup {
			l.addf(path, "duplicate of clusters[%d]", j)
		} else {
			first[cl.Name] = i
		}
	}
}

func (l *loader) validateRouter(r Router) {
	between := func(path string, v, lo, hi int) {
		if v < lo || v > hi {
			l.addf(path, "%d is out of range %d to %d", v, lo, hi)
		}
	}
	between("router.batchSize", r.BatchSize, 1, 10000)
	between("router.maximumBatchingWindowSeconds", r.MaximumBatchingWindowSeconds, 0, 300)
	if r.BatchSize > 10 && r.MaximumBatchingWindowSeconds < 1 {
		l.addf("router.maximumBatchingWindowSeconds", "must be at least 1 when batchSize (%d) is over 10, as Lambda requires", r.BatchSize)
	}
	between("router.maximumConcurrency", r.MaximumConcurrency, 2, 1000)
	between("router.memoryMb", r.MemoryMB, 128, 10240)
	between("router.timeoutSeconds", r.TimeoutSeconds, 3, 900)
	if !slices.Contains(logRetentionDays, r.LogRetentionDays) {
		l.addf("router.logRetentionDays", "%d is not a CloudWatch Logs retention (one of %v)", r.LogRetentionDays, logRetentionDays)
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, r.LogLevel) {
		l.addf("router.logLevel", "%q is not one of debug, info, warn, error", r.LogLevel)
	}
	for i, k := range r.OwnerTagKeys {
		if strings.TrimSpace(k) == "" || strings.Contains(k, ",") || len(k) > 128 {
			l.addf(fmt.Sprintf("router.ownerTagKeys[%d]", i), "%q must be a tag key of 1 to 128 characters without commas", k)
		}
	}
}

// VisibilityTimeout is the central queue's visibility timeout: AWS asks for at least 6 times the function
// timeout, plus the batching window.
func (r Router) VisibilityTimeout() int {
	return 6*r.TimeoutSeconds + r.MaximumBatchingWindowSeconds
}

func (l *loader) validateCentralQueue(q CentralQueue, r Router) {
	if q.MessageRetentionSeconds < 60 || q.MessageRetentionSeconds > 1209600 {
		l.addf("centralQueue.messageRetentionSeconds", "%d is out of range 60 to 1209600", q.MessageRetentionSeconds)
	}
	if q.MaxReceiveCount < 1 || q.MaxReceiveCount > 1000 {
		l.addf("centralQueue.maxReceiveCount", "%d is out of range 1 to 1000", q.MaxReceiveCount)
	}
	if q.EventMaxAgeSeconds < 60 || q.EventMaxAgeSeconds > 86400 {
		l.addf("centralQueue.eventMaxAgeSeconds", "%d is out of range 60 to 86400", q.EventMaxAgeSeconds)
	}
	if v := r.VisibilityTimeout(); v > 43200 {
		l.addf("router.timeoutSeconds", "gives the central queue a visibility timeout of %d s (6 x timeout + batching window), over SQS's 43200", v)
	}
}

func (l *loader) validateAlarms(a Alarms) {
	if a.TopicARN != "" && !snsARNRE.MatchString(a.TopicARN) {
		l.addf("alarms.topicArn", "%q is not an SNS topic ARN", a.TopicARN)
	}
	if a.OldestMessageAgeSeconds < 10 {
		l.addf("alarms.oldestMessageAgeSeconds", "%d is below 10", a.OldestMessageAgeSeconds)
	}
}

func (l *loader) validateTags(tags map[string]string) {
	for k, v := range tags {
		switch {
		case k == "" || len(k) > 128:
			l.addf("tags", "key %q must be 1 to 128 characters", k)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			l.addf("tags."+k, "keys starting with aws: are reserved by AWS")
		case len(v) > 256:
			l.addf("tags."+k, "value is %d characters, at most 256", len(v))
		}
	}
}
