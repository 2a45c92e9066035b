package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// logRetentionDays are the values CloudWatch Logs accepts.
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// MaxNamePrefix leaves room for the longest suffix ("-router-events" on a 64-character IAM role name).
const MaxNamePrefix = 40

// MaxCreateName is the longest name of a cluster the stack creates (mode create; in the package, the
// ClusterInterruption's name): pulumi-eks v2.8.1 names the cluster's default instance role after it, with no name of
// its own (nodejs/eks/cluster.ts createCore, ServiceRole `${name}-instanceRole`; servicerole.ts, aws.iam.Role
// `${name}-role`; name is the eks.Cluster's, <name>-eks), and pulumi-aws names such a role with 8 more characters
// (resources.go, aws_iam_role: AutoName("name", 64, "-")), within IAM's 64: 64 - len("-eks-instanceRole-role") - 8.
const MaxCreateName = 34

// MaxProvisionedPollers is the most pollers the pinned pulumi-aws takes: terraform-provider-aws v5.100.0,
// internal/service/lambda/event_source_mapping.go, provisioned_poller_config.maximum_pollers: IntBetween(1, 2000),
// checked at every preview, though Lambda takes up to 10,000 for SQS.
const MaxProvisionedPollers = 2000

var (
	associationRE = regexp.MustCompile(`^a-[0-9a-z]{1,64}$`)
	namePrefixRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)
	snsARNRE      = partitioned(regexp.MustCompile(`^arn:([a-z0-9-]+):sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$`))
	k8sNameRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// k8sSubdomainRE is a DNS subdomain, as Kubernetes names a service account (ValidateServiceAccountName:
	// NameIsDNSSubdomain, at most 253 characters).
	k8sSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	roleNameRE     = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	oidcARNRE      = partitioned(regexp.MustCompile(`^arn:([a-z0-9-]+):iam::[0-9]{12}:oidc-provider/.+$`))
	vpcRE          = regexp.MustCompile(`^vpc-[0-9a-f]{8,17}$`)
	subnetRE       = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
	// k8sVersionRE is a Kubernetes minor version as EKS takes it.
	k8sVersionRE = regexp.MustCompile(`^1\.[0-9]{2}$`)
)

// validate checks c, whose defaults are applied, and adds every problem to p. It changes nothing. With
// s.clustersJoin (LoadBus), c's clusters join it from elsewhere.
func validate(c Config, s shape, p *problems) {
	if len(c.NamePrefix) > MaxNamePrefix || !namePrefixRE.MatchString(c.NamePrefix) {
		p.addf("namePrefix", "%q must be 1 to %d letters, digits and '-', starting with a letter or digit (set namePrefix when the stack name does not fit)", c.NamePrefix, MaxNamePrefix)
	}
	if c.Baselined() && c.NamePrefix != "" && !isLetter(c.NamePrefix[0]) {
		// "The name ... must start with an alphabetic character" (CreateStackSet, StackSetName,
		// https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_CreateStackSet.html; the pinned provider
		// refuses it at preview: terraform-provider-aws v5.100.0, internal/service/cloudformation/stack_set.go, name).
		p.addf("namePrefix", "%q starts with a digit: with organization.memberOUs the member StackSet is named after it (%s), and a StackSet's "+
			"name must start with a letter; start namePrefix with a letter", c.NamePrefix, c.NamePrefix+"-member-baseline")
	}
	validateClusters(c.Clusters, s.component, p)
	validateAccounts(c, s.clustersJoin, p)
	validateOrganization(c.Organization, p)
	validateRouter(c.Router, p)
	validateCentralQueue(c.CentralQueue, c.Router, p)
	validateRedrive(c.Redrive, p)
	validateArchive(c.Archive, p)
	validateAlarms(c.Alarms, p)
	validateHeartbeat(c.Heartbeat, c.Router, p)
	validateTags(c.Tags, p)
	validateHub(c, p)
	if c.ProviderBudgetMB < MinProviderBudgetMB {
		p.addf("providerBudgetMB", "%d MB is less than one preview's providers can run in: at least %d", c.ProviderBudgetMB, MinProviderBudgetMB)
	}
}

// stackNameRE is a stack's name as a stack reference takes it: stack, project/stack or organization/project/stack.
var stackNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+){0,2}$`)

func validateHub(c Config, p *problems) {
	switch {
	case !c.IsShard():
	case !stackNameRE.MatchString(c.Hub):
		p.addf("hub", "%q is not a stack name such as prod, or acme/karpenter-interruption-bus/prod", c.Hub)
	case c.Hub == c.Stack || strings.HasSuffix(c.Hub, "/"+c.Stack):
		p.addf("hub", "%q is this stack: a shard names its hub, another stack", c.Hub)
	case c.Organization != nil && len(c.Organization.MemberOUs) > 0:
		p.addf("organization.memberOUs", "applies to the hub only: the hub's StackSet gives every member its baseline")
	}
}

// oneOf formats the allowed values of a string type.
func oneOf[S ~string](values []S) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

var roleARNRE = partitioned(regexp.MustCompile(`^arn:([a-z0-9-]+):iam::([0-9]{12}):role/[\w+=,.@/-]{1,512}$`))

// arnRE matches ARNs whose first group is an AWS partition (contract.Partitions): every one AWS has, and no
// other.
type arnRE struct{ re *regexp.Regexp }

func partitioned(re *regexp.Regexp) arnRE { return arnRE{re} }

// MatchString reports whether s is such an ARN.
func (a arnRE) MatchString(s string) bool { return a.FindStringSubmatch(s) != nil }

// FindStringSubmatch is the regular expression's, nil unless the partition is one.
func (a arnRE) FindStringSubmatch(s string) []string {
	m := a.re.FindStringSubmatch(s)
	if m == nil || !contract.IsPartition(m[1]) {
		return nil
	}
	return m
}

// validateAccounts checks the member accounts and the clusters' accounts: each member is a 12-digit ID, not the
// stack's own, with a deploy role of its own and at least one cluster; each cluster's account is the stack's or
// a member.
func validateAccounts(c Config, clustersJoin bool, p *problems) {
	used := map[string]bool{}
	for i, cl := range c.Clusters {
		switch {
		case cl.Account == "" || cl.Account == c.Account:
		case !contract.IsAccount(cl.Account):
			p.addf(fmt.Sprintf("clusters[%d].account", i), "%q is not a 12-digit account ID", cl.Account)
		case !c.IsMember(cl.Account):
			p.addf(fmt.Sprintf("clusters[%d].account", i), "%s is neither the stack's account (%s) nor in accounts", cl.Account, c.Account)
		case cl.Mode == ModeCreate:
			p.addf(fmt.Sprintf("clusters[%d].mode", i), "create is not supported in a member account: create the cluster with a stack there, then use install")
		default:
			used[cl.Account] = true
		}
	}
	for _, id := range c.MemberAccounts() {
		a := c.Accounts[id]
		at := func(field string) string { return "accounts." + id + field }
		switch {
		case !contract.IsAccount(id):
			p.addf(at(""), "is not a 12-digit account ID")
			continue
		case id == c.Account:
			p.addf(at(""), "is the stack's own account: its clusters need no entry in accounts")
			continue
		case !used[id] && !clustersJoin:
			p.addf(at(""), "has no cluster: give a cluster account: %s, or remove the entry", id)
		}
		if m := roleARNRE.FindStringSubmatch(a.DeployRoleARN); m == nil {
			p.addf(at(".deployRoleArn"), "%q is not an IAM role ARN: the role Pulumi assumes in %s", a.DeployRoleARN, id)
		} else if m[2] != id {
			p.addf(at(".deployRoleArn"), "%q is a role of account %s, not of %s", a.DeployRoleARN, m[2], id)
		}
		if a.AlarmTopicARN != "" {
			if problem := AlarmTopicProblem(a.AlarmTopicARN, id); problem != "" {
				p.addf(at(".alarmTopicArn"), "%s", problem)
			}
		}
	}
}

// AlarmTopicProblem is what is wrong with arn as the topic an alarm of account notifies ("" nothing).
func AlarmTopicProblem(arn, account string) string {
	if !snsARNRE.MatchString(arn) {
		return fmt.Sprintf("%q is not an SNS topic ARN", arn)
	}
	if strings.Split(arn, ":")[4] != account {
		return fmt.Sprintf("%q is a topic of another account: CloudWatch alarms notify topics of their own account", arn)
	}
	return ""
}

func validateHeartbeat(h Heartbeat, r Router, p *problems) {
	d, err := time.ParseDuration(h.Rate)
	if err != nil || d%time.Minute != 0 || d < MinHeartbeatRate || d > MaxHeartbeatRate {
		p.addf("heartbeat.rate", "%q is not a whole number of minutes from %dm to %dm, such as %s", h.Rate,
			int(MinHeartbeatRate.Minutes()), int(MaxHeartbeatRate.Minutes()), DefaultHeartbeat.Rate)
		return
	}
	if interval := time.Duration(r.CanaryIntervalSeconds) * time.Second; h.Enabled && interval >= d {
		p.addf("router.canaryIntervalSeconds", "%d s is not below heartbeat.rate (%s): the router would hold back beats, and "+
			"the heartbeat alarms would fire", r.CanaryIntervalSeconds, h.Rate)
	}
}

// validateClusters checks clusters, each one's children named after it, or after component when set.
func validateClusters(clusters []Cluster, component string, p *problems) {
	first := map[string]int{}
	folded := map[string]int{} // the names as IAM compares them
	for i, cl := range clusters {
		at := func(field string) string { return fmt.Sprintf("clusters[%d].%s", i, field) }
		if cl.Name == "" {
			p.addf(at("name"), "is required")
		} else if err := queuename.ValidateCluster(cl.Name); err != nil {
			p.addf(at("name"), "%v", err)
		} else if j, dup := first[cl.Name]; dup {
			p.addf(at("name"), "duplicate of clusters[%d]", j)
		} else if j, dup := folded[strings.ToLower(cl.Name)]; dup {
			// EKS cluster names are case-sensitive, IAM role names are not ("Names are not distinguished by case",
			// CreateRole, https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html): the two clusters'
			// roles (KarpenterNode-<name>-<region>, ...) would be one name, and the second CreateRole would fail
			// with EntityAlreadyExists, half the stack created.
			p.addf(at("name"), "%q differs from clusters[%d].name %q only in case: IAM role names are not case-sensitive, so the two "+
				"clusters' roles would have one name; rename one of them", cl.Name, j, clusters[j].Name)
		} else {
			first[cl.Name] = i
			folded[strings.ToLower(cl.Name)] = i
		}
		if cl.MovedFrom != "" && !stackNameRE.MatchString(cl.MovedFrom) {
			p.addf(at("movedFrom"), "%q is not a stack name such as prod, or acme/karpenter-interruption-bus/prod", cl.MovedFrom)
		}
		if id := cl.Karpenter.PodIdentityAssociationID; id != "" && !associationRE.MatchString(id) {
			p.addf(at("karpenter.podIdentityAssociationId"), "%q is not a pod identity association ID such as a-abcdefghijklmnop1", id)
		}
		if !slices.Contains(Modes, cl.Mode) {
			p.addf(at("mode"), "%q is not one of %s", cl.Mode, oneOf(Modes))
			continue
		}
		if cl.Mode.InstallsKarpenter() && !slices.Contains(Identities, cl.Identity) {
			p.addf(at("identity"), "%q is not one of %s", cl.Identity, oneOf(Identities))
		}
		switch {
		case cl.Mode == ModeInstall && cl.Identity == IdentityIRSA && cl.OIDCProviderARN == "":
			p.addf(at("oidcProviderArn"), "is required with identity irsa: the ARN of the cluster's IAM OIDC provider")
		case cl.OIDCProviderARN != "" && (cl.Mode != ModeInstall || cl.Identity != IdentityIRSA):
			p.addf(at("oidcProviderArn"), "applies only to mode install with identity irsa (create mode makes its own provider)")
		case cl.OIDCProviderARN != "" && !oidcARNRE.MatchString(cl.OIDCProviderARN):
			p.addf(at("oidcProviderArn"), "%q is not an IAM OIDC provider ARN", cl.OIDCProviderARN)
		}
		switch {
		case cl.Mode == ModeExistingRole && cl.ControllerRoleName == "":
			p.addf(at("controllerRoleName"), "is required with mode existing-role: the name of Karpenter's controller role")
		case cl.Mode != ModeExistingRole && cl.ControllerRoleName != "":
			p.addf(at("controllerRoleName"), "applies only to mode existing-role")
		case cl.ControllerRoleName != "" && !roleNameRE.MatchString(cl.ControllerRoleName):
			p.addf(at("controllerRoleName"), "%q is not an IAM role name", cl.ControllerRoleName)
		}
		if cl.Mode == ModeExistingRole && cl.Identity != "" {
			p.addf(at("identity"), "applies only to modes install and create")
		}
		validateKarpenter(at, cl.Karpenter, component == "", p)
		validateCreate(at, cl, component, p)
	}
}

// validateKarpenter checks k; with objects, that the chart values the bus writes into are objects (not in the package,
// whose stand-in for an object unknown at a preview is a string: there the chart refuses a value that is not one).
func validateKarpenter(at func(string) string, k Karpenter, objects bool, p *problems) {
	if v, err := karpenter.Parse(k.Version); err != nil {
		p.addf(at("karpenter.version"), "%v", err)
	} else if !v.Supported() {
		p.addf(at("karpenter.version"), "%q is outside the supported range, %s (docs/clusters.md, \"Karpenter versions\")", k.Version, karpenter.Range())
	}
	if !k8sNameRE.MatchString(k.Namespace) || len(k.Namespace) > 63 {
		p.addf(at("karpenter.namespace"), "%q is not a Kubernetes namespace name", k.Namespace)
	}
	if !k8sSubdomainRE.MatchString(k.ServiceAccount) || len(k.ServiceAccount) > 253 {
		p.addf(at("karpenter.serviceAccount"), "%q is not a Kubernetes service account name", k.ServiceAccount)
	}
	if objects {
		// The objects the bus writes into: an object where given, as the chart takes them.
		for _, key := range []string{"settings", "serviceAccount"} {
			if _, ok := ObjectAt(k.Values, key); !ok {
				p.addf(at("karpenter.values."+key), "must be an object, as Karpenter's chart takes it")
			}
		}
		if sa, ok := k.Values["serviceAccount"].(map[string]any); ok {
			if _, ok := ObjectAt(sa, "annotations"); !ok {
				p.addf(at("karpenter.values.serviceAccount.annotations"), "must be an object, as Karpenter's chart takes it")
			}
		}
	}
	if settings, ok := k.Values["settings"].(map[string]any); ok {
		for _, key := range []string{"clusterName", "interruptionQueue"} {
			if _, set := settings[key]; set {
				p.addf(at("karpenter.values.settings."+key), "is set by the bus and must not be overridden")
			}
		}
	}
}

// ObjectAt is the chart value m holds at key as an object: a new, empty one when m holds none there (absent, or null);
// false when it holds something else.
func ObjectAt(m map[string]any, key string) (map[string]any, bool) {
	v, present := m[key]
	if !present || v == nil {
		return map[string]any{}, true
	}
	o, ok := v.(map[string]any)
	return o, ok
}

func validateCreate(at func(string) string, cl Cluster, component string, p *problems) {
	c := cl.Create
	switch {
	case cl.Mode == ModeCreate && c == nil:
		p.addf(at("create"), "is required with mode create: at least vpcId and subnetIds")
		return
	case cl.Mode != ModeCreate && c != nil:
		p.addf(at("create"), "applies only to mode create")
		return
	case c == nil:
		return
	}
	switch {
	case component != "" && len(component) > MaxCreateName:
		p.addf(at("mode"), "create: the component's name %q is %d characters, at most %d in mode create, as pulumi-eks names the cluster's IAM "+
			"roles after it (%s-eks-instanceRole-role and 8 random characters, within IAM's 64); give the component a shorter name",
			component, len(component), MaxCreateName, component)
	case component == "" && len(cl.Name) > MaxCreateName:
		p.addf(at("name"), "%q is %d characters: a cluster the stack creates takes at most %d, as pulumi-eks names its IAM roles after it "+
			"(%s-eks-instanceRole-role and 8 random characters, within IAM's 64)", cl.Name, len(cl.Name), MaxCreateName, cl.Name)
	}
	if !vpcRE.MatchString(c.VpcID) {
		p.addf(at("create.vpcId"), "%q is not a VPC ID", c.VpcID)
	}
	if len(c.SubnetIDs) < 2 {
		p.addf(at("create.subnetIds"), "needs at least 2 subnets, in different availability zones, as EKS requires")
	}
	for j, s := range c.SubnetIDs {
		if !subnetRE.MatchString(s) {
			p.addf(at(fmt.Sprintf("create.subnetIds[%d]", j)), "%q is not a subnet ID", s)
		}
	}
	if v := c.KubernetesVersion; v != "" && !k8sVersionRE.MatchString(v) {
		p.addf(at("create.kubernetesVersion"), "%q is not a Kubernetes minor version such as 1.33", v)
	} else if v != "" {
		checkKubernetes(at("create.kubernetesVersion"), v, cl.Karpenter.Version, p)
	}
	n := c.SystemNodes
	if n.Min < 1 || n.Max < n.Min || n.Desired < n.Min || n.Desired > n.Max {
		p.addf(at("create.systemNodes"), "needs 1 <= min (%d) <= desired (%d) <= max (%d)", n.Min, n.Desired, n.Max)
	}
}

func validateRouter(r Router, p *problems) {
	between := func(path string, v, lo, hi int) {
		if v < lo || v > hi {
			p.addf(path, "%d is out of range %d to %d", v, lo, hi)
		}
	}
	between("router.batchSize", r.BatchSize, 1, 10000)
	between("router.maximumBatchingWindowSeconds", r.MaximumBatchingWindowSeconds, 0, 300)
	if r.BatchSize > 10 && r.MaximumBatchingWindowSeconds < 1 {
		p.addf("router.maximumBatchingWindowSeconds", "must be at least 1 when batchSize (%d) is over 10, as Lambda requires", r.BatchSize)
	}
	between("router.maximumConcurrency", r.MaximumConcurrency, 2, 1000)
	if pp := r.ProvisionedPollers; pp != nil {
		// Lambda refuses a mapping with both ("Configuring scaling behavior for SQS event source mappings": "These
		// are mutually exclusive options", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html).
		if r.maximumConcurrencySet {
			p.addf("router.provisionedPollers", "cannot be combined with router.maximumConcurrency: Lambda takes either provisioned pollers or a maximum concurrency; remove one of the two keys")
		}
		// For SQS, at least 2 pollers, at most 200 kept and 10,000 in all ("ProvisionedPollerConfig", Lambda API
		// reference: MinimumPollers 1 to 200, MaximumPollers 1 to 2,000, and for SQS "2 to 10,000",
		// https://docs.aws.amazon.com/lambda/latest/api/API_ProvisionedPollerConfig.html); the pinned provider takes
		// 2,000 at most (MaxProvisionedPollers).
		between("router.provisionedPollers.minimum", pp.Minimum, 2, 200)
		between("router.provisionedPollers.maximum", pp.Maximum, 2, MaxProvisionedPollers)
		if pp.Maximum < pp.Minimum {
			p.addf("router.provisionedPollers.maximum", "%d is below minimum (%d)", pp.Maximum, pp.Minimum)
		}
	}
	if r.ReservedConcurrency != 0 {
		// What the account can give is read from Lambda before anything is declared (infra/concurrency); here, the
		// mapping's most at most.
		between("router.reservedConcurrency", r.ReservedConcurrency, 2, 10000*sizing.PollerInvocations)
		// "Don't set maximum concurrency higher than the function's reserved concurrency … Otherwise, Lambda may
		// throttle your messages" ("Configuring scaling behavior for SQS event source mappings",
		// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html); a provisioned poller runs up to 10
		// invocations at once (same page).
		switch reserved := r.ReservedConcurrency; {
		case r.ProvisionedPollers != nil && r.ModeCeiling() > reserved:
			p.addf("router.provisionedPollers.maximum", "%d pollers run up to %d invocations at once (%d each), above router.reservedConcurrency "+
				"(%d): Lambda would throttle the mapping's invocations. Fix: set router.provisionedPollers.maximum to at most %d, or "+
				"router.reservedConcurrency to at least %d", r.ProvisionedPollers.Maximum, r.ModeCeiling(), sizing.PollerInvocations, reserved,
				reserved/sizing.PollerInvocations, r.ModeCeiling())
		case r.ProvisionedPollers == nil && r.MaximumConcurrency > reserved:
			p.addf("router.maximumConcurrency", "%d is above router.reservedConcurrency (%d): the mapping would run more routers than the "+
				"function may, and Lambda would throttle the rest. Fix: set router.maximumConcurrency to at most %d, or "+
				"router.reservedConcurrency to at least %d", r.MaximumConcurrency, reserved, reserved, r.MaximumConcurrency)
		}
	}
	between("router.memoryMb", r.MemoryMB, 128, 10240)
	between("router.timeoutSeconds", r.TimeoutSeconds, 3, 900)
	between("router.canaryIntervalSeconds", r.CanaryIntervalSeconds, 1, 3600)
	if !slices.Contains(logRetentionDays, r.LogRetentionDays) {
		p.addf("router.logRetentionDays", "%d is not a CloudWatch Logs retention (one of %v)", r.LogRetentionDays, logRetentionDays)
	}
	if !slices.Contains(contract.LogLevels, r.LogLevel) {
		p.addf("router.logLevel", "%q is not one of %s", r.LogLevel, oneOf(contract.LogLevels))
	}
	if !slices.Contains(contract.SenderChecks, r.SenderCheck) {
		p.addf("router.senderCheck", "%q is not one of %s", r.SenderCheck, oneOf(contract.SenderChecks))
	}
	for i, k := range r.OwnerTagKeys {
		if strings.TrimSpace(k) == "" || strings.Contains(k, ",") || len(k) > 128 {
			p.addf(fmt.Sprintf("router.ownerTagKeys[%d]", i), "%q must be a tag key of 1 to 128 characters without commas", k)
		}
	}
}

func validateCentralQueue(q CentralQueue, r Router, p *problems) {
	if q.MessageRetentionSeconds < 60 || q.MessageRetentionSeconds > 1209600 {
		p.addf("centralQueue.messageRetentionSeconds", "%d is out of range 60 to 1209600", q.MessageRetentionSeconds)
	}
	if q.MaxReceiveCount < 1 || q.MaxReceiveCount > 1000 {
		p.addf("centralQueue.maxReceiveCount", "%d is out of range 1 to 1000", q.MaxReceiveCount)
	}
	if q.EventMaxAgeSeconds < 60 || q.EventMaxAgeSeconds > 86400 {
		p.addf("centralQueue.eventMaxAgeSeconds", "%d is out of range 60 to 86400", q.EventMaxAgeSeconds)
	}
	if !slices.Contains(contract.HubDeliveries, q.HubDelivery) {
		p.addf("centralQueue.hubDelivery", "%q is not one of %s", q.HubDelivery, strings.Join(contract.HubDeliveries, ", "))
	}
	if v := r.VisibilityTimeout(); v > 43200 {
		p.addf("router.timeoutSeconds", "gives the central queue a visibility timeout of %d s (6 x timeout + batching window), over SQS's 43200", v)
	}
}

// principalARNRE is an IAM role's or user's ARN, path included ("IAM identifiers", ARNs,
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-arns).
var principalARNRE = partitioned(regexp.MustCompile(`^arn:([a-z0-9-]+):iam::([0-9]{12}):(role|user)/[\w+=,.@/-]{1,512}$`))

// validateRedrive checks the principals of the redrive role's trust: roles and users, by exact ARN (an account's
// root would admit every principal of that account whose own policy allows sts:AssumeRole), each once.
func validateRedrive(r Redrive, p *problems) {
	seen := map[string]int{}
	for i, arn := range r.Principals {
		path := fmt.Sprintf("redrive.principals[%d]", i)
		switch {
		case strings.HasSuffix(arn, ":root"):
			p.addf(path, "%q is an account's root, which admits every principal of the account allowed sts:AssumeRole: name the roles or users that may send messages back", arn)
		case strings.Contains(arn, "*"):
			p.addf(path, "%q has a wildcard: name each role or user by its ARN", arn)
		case !principalARNRE.MatchString(arn):
			p.addf(path, "%q is not an IAM role or user ARN such as arn:aws:iam::111122223333:role/oncall", arn)
		}
		if j, dup := seen[strings.ToLower(arn)]; dup { // IAM does not tell names apart by case
			p.addf(path, "duplicate of redrive.principals[%d]", j)
		} else {
			seen[strings.ToLower(arn)] = i
		}
	}
	if r.TrustPolicyLimit < DefaultTrustPolicyLimit || r.TrustPolicyLimit > MaxTrustPolicyLimit {
		p.addf("redrive.trustPolicyLimit", "%d is not between %d (IAM's default quota of a role's trust policy) and %d (the most AWS raises it to)",
			r.TrustPolicyLimit, DefaultTrustPolicyLimit, MaxTrustPolicyLimit)
	}
}

// validateArchive checks the archive's retention: a mode S3 takes, and a period it takes.
func validateArchive(a Archive, p *problems) {
	if !slices.Contains(ArchiveModes, a.Mode) {
		p.addf("archive.mode", "%q is not one of %s", a.Mode, strings.Join(ArchiveModes, ", "))
	}
	if a.RetentionDays < 1 || a.RetentionDays > MaxArchiveRetentionDays {
		p.addf("archive.retentionDays", "%d is not between 1 and %d (100 years, the longest S3 locks an object)", a.RetentionDays, MaxArchiveRetentionDays)
	}
}

func validateAlarms(a Alarms, p *problems) {
	if a.TopicARN != "" && !snsARNRE.MatchString(a.TopicARN) {
		p.addf("alarms.topicArn", "%q is not an SNS topic ARN", a.TopicARN)
	}
	if a.OldestMessageAgeSeconds < 10 {
		p.addf("alarms.oldestMessageAgeSeconds", "%d is below 10", a.OldestMessageAgeSeconds)
	}
}

func validateTags(tags map[string]string, p *problems) {
	for k, v := range tags {
		switch {
		// In Unicode characters, as AWS counts them ("Tag naming limits and requirements",
		// https://docs.aws.amazon.com/tag-editor/latest/userguide/best-practices-and-strats.html).
		case k == "" || utf8.RuneCountInString(k) > 128:
			p.addf("tags", "key %q must be 1 to 128 characters", k)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			p.addf("tags."+k, "keys starting with aws: are reserved by AWS")
		case utf8.RuneCountInString(v) > 256:
			p.addf("tags."+k, "value is %d characters, at most 256", utf8.RuneCountInString(v))
		}
	}
}

// Deployed is what the last update deployed of a cluster: its mode and, when the stack installed Karpenter, the
// namespace of its release.
type Deployed struct {
	Mode      Mode
	Namespace string
	// PodIdentityAssociationID is the ID of the pod identity association the cluster's Karpenter ran with.
	PodIdentityAssociationID string
	// ReleaseDigest digests the Karpenter release the stack last made ("" unknown: no release, or none recorded).
	ReleaseDigest string
}

// DeployedClusters reads the clusters output of the last update (cluster -> its record) into Deployed values.
func DeployedClusters(records map[string]outputs.ReadCluster) map[string]Deployed {
	out := map[string]Deployed{}
	for name, c := range records {
		out[name] = Deployed{Mode: Mode(c.Mode), Namespace: c.KarpenterNamespace, PodIdentityAssociationID: c.PodIdentityAssociationID, ReleaseDigest: c.ReleaseDigest}
	}
	return out
}

// CheckReleases refuses the changes that would replace a Karpenter release the stack cannot replace safely, unless
// the entry acknowledges with karpenter.replaceRelease that the old release was uninstalled: Helm cannot move a
// release to another namespace, and a release installed over one managed elsewhere collides with it. The old
// release is retained on delete, so Pulumi would leave it running and the new one would fail on its cluster-
// scoped objects (or, worse, half-install). It returns a *Error naming each entry, or nil.
func CheckReleases(c Config, deployed map[string]Deployed) error {
	var p problems
	for i, cl := range c.Clusters {
		was, ok := deployed[cl.Name]
		if !ok || !cl.Mode.InstallsKarpenter() || cl.Karpenter.ReplaceRelease {
			continue
		}
		at := fmt.Sprintf("clusters[%d]", i)
		switch {
		case was.Mode.InstallsKarpenter() && was.Namespace != "" && was.Namespace != cl.Karpenter.Namespace:
			p.addf(at+".karpenter.namespace", "%q would replace the Karpenter release this stack deployed in %q: Helm "+
				"cannot move a release, and the retained old one would collide with the new one. Keep %q, or move it: "+
				"helm uninstall karpenter -n %s (running nodes stay), then set %s.karpenter.replaceRelease: true and "+
				"run pulumi up (docs/clusters.md, \"Changing a cluster\")", cl.Karpenter.Namespace, was.Namespace, was.Namespace, was.Namespace, at)
		case was.Mode == ModeExistingRole:
			p.addf(at+".mode", "%q would install Karpenter over the release managed elsewhere until now (mode %s), and "+
				"collide with it. Uninstall that release first (helm uninstall karpenter -n <its namespace>; running nodes "+
				"stay), then set %s.karpenter.replaceRelease: true and run pulumi up (docs/clusters.md, \"Changing a cluster\")",
				cl.Mode, ModeExistingRole, at)
		}
	}
	if len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

// checkKubernetes reports a Kubernetes version k that Karpenter karpenterVersion does not run on; an unsupported
// or malformed Karpenter version is reported on its own field.
func checkKubernetes(path, k, karpenterVersion string, p *problems) {
	v, err := karpenter.Parse(karpenterVersion)
	if err != nil {
		return
	}
	r, ok := v.Kubernetes()
	if !ok {
		return
	}
	if in, err := r.Contains(k); err == nil && !in {
		p.addf(path, "Kubernetes %s is outside what Karpenter %s runs on, %s: choose a Kubernetes version in that range, or a "+
			"karpenter.version that runs on %s (docs/clusters.md, \"Karpenter versions\")", k, v, r, k)
	}
}

var (
	orgIDRE = regexp.MustCompile(`^o-[a-z0-9]{10,32}$`)
	// ouRE is an organizational unit's ID, or the root's, the targets a StackSet deploys to.
	ouRE = regexp.MustCompile(`^(ou-[0-9a-z]{4,32}-[a-z0-9]{8,32}|r-[0-9a-z]{4,32})$`)
)

func validateOrganization(o *Organization, p *problems) {
	if o == nil {
		return
	}
	if !orgIDRE.MatchString(o.ID) {
		p.addf("organization.id", "%q is not an AWS Organizations ID such as o-a1b2c3d4e5", o.ID)
	}
	for i, ou := range o.MemberOUs {
		if !ouRE.MatchString(ou) {
			p.addf(fmt.Sprintf("organization.memberOUs[%d]", i), "%q is not an organizational unit ID (ou-...) or a root ID (r-...)", ou)
		}
	}
	if o.CallAs != CallAsDelegatedAdmin && o.CallAs != CallAsSelf {
		p.addf("organization.callAs", "%q is not one of %s, %s", o.CallAs, CallAsDelegatedAdmin, CallAsSelf)
	}
}

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
