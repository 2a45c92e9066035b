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

// Modes of a cluster entry: how its Karpenter is wired to the bus.
const (
	// ModeInstall (default) installs Karpenter on an existing EKS cluster: controller and node roles, identity,
	// access entry, Helm release reading this cluster's queue.
	ModeInstall = "install"
	// ModeExistingRole leaves Karpenter to whoever manages it: the interruption policy is attached to its
	// controller role, and the chart value to set is an output.
	ModeExistingRole = "existing-role"
	// ModeCreate creates the EKS cluster too (pulumi-eks), then installs as ModeInstall does.
	ModeCreate = "create"

	IdentityPodIdentity = "pod-identity"
	IdentityIRSA        = "irsa"

	// DefaultKarpenterVersion is the chart installed when karpenter.version is not set.
	DefaultKarpenterVersion = "1.6.3"
)

// Cluster is one entry of clusters.
type Cluster struct {
	Name string `json:"name"`
	// Mode is install, existing-role or create.
	Mode string `json:"mode"`
	// Identity gives Karpenter's controller its role: pod-identity (EKS Pod Identity) or irsa.
	Identity string `json:"identity"`
	// OIDCProviderARN is the cluster's IAM OIDC provider, for irsa in install mode.
	OIDCProviderARN string `json:"oidcProviderArn"`
	// ControllerRoleName is Karpenter's existing controller role, for existing-role mode.
	ControllerRoleName string    `json:"controllerRoleName"`
	Karpenter          Karpenter `json:"karpenter"`
	Create             *Create   `json:"create"`
	FIS                FIS       `json:"fis"`
}

// Karpenter configures the Helm release (install and create modes).
type Karpenter struct {
	Version        string `json:"version"`
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	// Values are extra chart values, merged under the ones the bus sets.
	Values map[string]any `json:"values"`
}

// Create configures a new EKS cluster (create mode).
type Create struct {
	VpcID             string   `json:"vpcId"`
	SubnetIDs         []string `json:"subnetIds"`
	KubernetesVersion string   `json:"kubernetesVersion"`
	// SystemNodes is the managed node group Karpenter itself runs on.
	SystemNodes SystemNodes `json:"systemNodes"`
}

// SystemNodes sizes the system node group.
type SystemNodes struct {
	InstanceType string `json:"instanceType"`
	Min          int    `json:"min"`
	Max          int    `json:"max"`
	Desired      int    `json:"desired"`
}

// FIS configures the optional spot interruption experiment.
type FIS struct {
	Enabled bool `json:"enabled"`
}

// DefaultSystemNodes are used for any system node field not set.
var DefaultSystemNodes = SystemNodes{InstanceType: "m7g.large", Min: 2, Max: 3, Desired: 2}

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

var (
	semverRE   = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	k8sNameRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	roleNameRE = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	oidcARNRE  = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:oidc-provider/.+$`)
	vpcRE      = regexp.MustCompile(`^vpc-[0-9a-f]{8,17}$`)
	subnetRE   = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
	// k8sVersionRE is a Kubernetes minor version as EKS takes it.
	k8sVersionRE = regexp.MustCompile(`^1\.[0-9]{2}$`)
)

// defaults fills a cluster entry's unset fields.
func (cl *Cluster) defaults() {
	if cl.Mode == "" {
		cl.Mode = ModeInstall
	}
	if cl.Identity == "" && cl.Mode != ModeExistingRole {
		cl.Identity = IdentityPodIdentity
	}
	if cl.Karpenter.Version == "" {
		cl.Karpenter.Version = DefaultKarpenterVersion
	}
	if cl.Karpenter.Namespace == "" {
		cl.Karpenter.Namespace = "kube-system"
	}
	if cl.Karpenter.ServiceAccount == "" {
		cl.Karpenter.ServiceAccount = "karpenter"
	}
	if c := cl.Create; c != nil {
		d := DefaultSystemNodes
		if c.SystemNodes.InstanceType == "" {
			c.SystemNodes.InstanceType = d.InstanceType
		}
		if c.SystemNodes.Min == 0 {
			c.SystemNodes.Min = d.Min
		}
		if c.SystemNodes.Max == 0 {
			c.SystemNodes.Max = max(d.Max, c.SystemNodes.Min)
		}
		if c.SystemNodes.Desired == 0 {
			c.SystemNodes.Desired = min(max(d.Desired, c.SystemNodes.Min), c.SystemNodes.Max)
		}
	}
}

func (l *loader) validateClusters(clusters []Cluster) {
	first := map[string]int{}
	for i := range clusters {
		cl := &clusters[i]
		at := func(field string) string { return fmt.Sprintf("clusters[%d].%s", i, field) }
		if cl.Name == "" {
			l.addf(at("name"), "is required")
		} else if err := queuename.ValidateCluster(cl.Name); err != nil {
			l.addf(at("name"), "%v", err)
		} else if j, dup := first[cl.Name]; dup {
			l.addf(at("name"), "duplicate of clusters[%d]", j)
		} else {
			first[cl.Name] = i
		}
		cl.defaults()
		switch cl.Mode {
		case ModeInstall, ModeExistingRole, ModeCreate:
		default:
			l.addf(at("mode"), "%q is not one of %s, %s, %s", cl.Mode, ModeInstall, ModeExistingRole, ModeCreate)
			continue
		}
		installs := cl.Mode != ModeExistingRole
		if installs && cl.Identity != IdentityPodIdentity && cl.Identity != IdentityIRSA {
			l.addf(at("identity"), "%q is not one of %s, %s", cl.Identity, IdentityPodIdentity, IdentityIRSA)
		}
		switch {
		case cl.Mode == ModeInstall && cl.Identity == IdentityIRSA && cl.OIDCProviderARN == "":
			l.addf(at("oidcProviderArn"), "is required with identity irsa: the ARN of the cluster's IAM OIDC provider")
		case cl.OIDCProviderARN != "" && (cl.Mode != ModeInstall || cl.Identity != IdentityIRSA):
			l.addf(at("oidcProviderArn"), "applies only to mode install with identity irsa (create mode makes its own provider)")
		case cl.OIDCProviderARN != "" && !oidcARNRE.MatchString(cl.OIDCProviderARN):
			l.addf(at("oidcProviderArn"), "%q is not an IAM OIDC provider ARN", cl.OIDCProviderARN)
		}
		switch {
		case cl.Mode == ModeExistingRole && cl.ControllerRoleName == "":
			l.addf(at("controllerRoleName"), "is required with mode existing-role: the name of Karpenter's controller role")
		case cl.Mode != ModeExistingRole && cl.ControllerRoleName != "":
			l.addf(at("controllerRoleName"), "applies only to mode existing-role")
		case cl.ControllerRoleName != "" && !roleNameRE.MatchString(cl.ControllerRoleName):
			l.addf(at("controllerRoleName"), "%q is not an IAM role name", cl.ControllerRoleName)
		}
		if cl.Mode == ModeExistingRole && cl.Identity != "" {
			l.addf(at("identity"), "applies only to modes install and create")
		}
		if !semverRE.MatchString(cl.Karpenter.Version) {
			l.addf(at("karpenter.version"), "%q is not a chart version such as %s", cl.Karpenter.Version, DefaultKarpenterVersion)
		}
		if !k8sNameRE.MatchString(cl.Karpenter.Namespace) || len(cl.Karpenter.Namespace) > 63 {
			l.addf(at("karpenter.namespace"), "%q is not a Kubernetes namespace name", cl.Karpenter.Namespace)
		}
		if !k8sNameRE.MatchString(cl.Karpenter.ServiceAccount) || len(cl.Karpenter.ServiceAccount) > 63 {
			l.addf(at("karpenter.serviceAccount"), "%q is not a Kubernetes service account name", cl.Karpenter.ServiceAccount)
		}
		if settings, ok := cl.Karpenter.Values["settings"].(map[string]any); ok {
			for _, k := range []string{"clusterName", "interruptionQueue"} {
				if _, set := settings[k]; set {
					l.addf(at("karpenter.values.settings."+k), "is set by the bus and must not be overridden")
				}
			}
		}
		l.validateCreate(at, cl)
	}
}

func (l *loader) validateCreate(at func(string) string, cl *Cluster) {
	c := cl.Create
	switch {
	case cl.Mode == ModeCreate && c == nil:
		l.addf(at("create"), "is required with mode create: at least vpcId and subnetIds")
		return
	case cl.Mode != ModeCreate && c != nil:
		l.addf(at("create"), "applies only to mode create")
		return
	case c == nil:
		return
	}
	if !vpcRE.MatchString(c.VpcID) {
		l.addf(at("create.vpcId"), "%q is not a VPC ID", c.VpcID)
	}
	if len(c.SubnetIDs) < 2 {
		l.addf(at("create.subnetIds"), "needs at least 2 subnets, in different availability zones, as EKS requires")
	}
	for j, s := range c.SubnetIDs {
		if !subnetRE.MatchString(s) {
			l.addf(at(fmt.Sprintf("create.subnetIds[%d]", j)), "%q is not a subnet ID", s)
		}
	}
	if v := c.KubernetesVersion; v != "" && !k8sVersionRE.MatchString(v) {
		l.addf(at("create.kubernetesVersion"), "%q is not a Kubernetes minor version such as 1.33", v)
	}
	n := c.SystemNodes
	if n.Min < 1 || n.Max < n.Min || n.Desired < n.Min || n.Desired > n.Max {
		l.addf(at("create.systemNodes"), "needs 1 <= min (%d) <= desired (%d) <= max (%d)", n.Min, n.Desired, n.Max)
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
