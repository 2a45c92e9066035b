package providerrules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// Rules are the rules of each resource type the program declares, by type token. pulumi-aws v6.83.2 bundles
// terraform-provider-aws v5.100.0: each Source names that provider's file (internal/service/<service>/<resource>.go)
// and schema field, read in the v5 line (pulumi-aws's SDK documents each argument as that line does: sdk/v6
// go/aws/<service>/<resource>.go), the v6 line's source and the provider's changelog where they differ.
//
// A rule whose Check is nil records that the provider validates nothing of the property: its Source cites the schema
// field that shows it. Checks marked "CustomizeDiff" are not schema validations: the provider runs them when it plans
// the resource (pulumi-aws's Diff, and its Create at a preview), which fails the preview as a Check failure does.
var Rules = map[string][]Rule{
	// internal/service/sqs/queue.go (SDKv2), queueSchema.
	"aws:sqs/queue:Queue": {
		{Property: "maxMessageSize", Attr: "max_message_size", Check: IntBetween(1024, 262144),
			Source: "internal/service/sqs/queue.go, max_message_size: validation.IntBetween(1024, 262_144) in v5.100.0 " +
				"(1_048_576 from v6.8.0, hashicorp/terraform-provider-aws#43710; the v5 backport #44845 closed unmerged)"},
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), sqsQueueName()),
			Source: "internal/service/sqs/queue.go, name: ConflictsWith name_prefix, no ValidateFunc; CustomizeDiff " +
				"resourceQueueCustomizeDiff: on create, \"invalid queue name: %s\" unless it matches ^[0-9A-Za-z_-]{1,80}$ " +
				"(^[0-9A-Za-z_-]{1,75}\\.fifo$ for a fifo_queue)"},
		{Property: "messageRetentionSeconds", Attr: "message_retention_seconds", Check: IntBetween(60, 1209600),
			Source: "internal/service/sqs/queue.go, message_retention_seconds: validation.IntBetween(60, 1_209_600), Default 345_600"},
		{Property: "visibilityTimeoutSeconds", Attr: "visibility_timeout_seconds", Check: IntBetween(0, 43200),
			Source: "internal/service/sqs/queue.go, visibility_timeout_seconds: validation.IntBetween(0, 43_200), Default 30"},
		{Property: "delaySeconds", Attr: "delay_seconds", Check: IntBetween(0, 900),
			Source: "internal/service/sqs/queue.go, delay_seconds: validation.IntBetween(0, 900), Default 0"},
		{Property: "receiveWaitTimeSeconds", Attr: "receive_wait_time_seconds",
			Source: "internal/service/sqs/queue.go, receive_wait_time_seconds: TypeInt, Default 0, no ValidateFunc"},
		{Property: "sqsManagedSseEnabled", Attr: "sqs_managed_sse_enabled", Check: ConflictsWith(map[string]string{"kmsMasterKeyId": "kms_master_key_id"}),
			Source: "internal/service/sqs/queue.go, sqs_managed_sse_enabled: TypeBool, ConflictsWith kms_master_key_id"},
		{Property: "kmsMasterKeyId", Attr: "kms_master_key_id", Check: ConflictsWith(map[string]string{"sqsManagedSseEnabled": "sqs_managed_sse_enabled"}),
			Source: "internal/service/sqs/queue.go, kms_master_key_id: ConflictsWith sqs_managed_sse_enabled, no ValidateFunc"},
		{Property: "redrivePolicy", Attr: "redrive_policy", Check: StringIsJSON(),
			Source: "internal/service/sqs/queue.go, redrive_policy: validation.StringIsJSON"},
		{Property: "redriveAllowPolicy", Attr: "redrive_allow_policy", Check: StringIsJSON(),
			Source: "internal/service/sqs/queue.go, redrive_allow_policy: validation.StringIsJSON"},
		{Property: "policy", Attr: "policy", Check: StringIsJSON(),
			Source: "internal/service/sqs/queue.go, policy: validation.StringIsJSON"},
		tagsRule("internal/service/sqs/queue.go"),
	},
	// internal/service/sqs/queue_policy.go (SDKv2).
	"aws:sqs/queuePolicy:QueuePolicy": {
		{Property: "queueUrl", Attr: "queue_url",
			Source: "internal/service/sqs/queue_policy.go, queue_url: TypeString, Required, ForceNew, no ValidateFunc"},
		{Property: "policy", Attr: "policy", Check: StringIsJSON(),
			Source: "internal/service/sqs/queue_policy.go, policy: validation.StringIsJSON (sdkv2.IAMPolicyDocumentSchemaRequired, internal/sdkv2/schema.go)"},
	},

	// internal/service/iam/role.go (SDKv2).
	"aws:iam/role:Role": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), iamResourceName(64)),
			Source: "internal/service/iam/role.go, name: ConflictsWith name_prefix, validResourceName(roleNameMaxLen = 64) " +
				"(internal/service/iam/validate.go: validation.StringLenBetween(1, 64), validation.StringMatch(^[\\w+=,.@-]*$, \"must match [\\w+=,.@-]\"))"},
		{Property: "description", Attr: "description", Check: All(
			StringLenBetween(0, 1000),
			StringDoesNotMatch(regexp.MustCompile("[“‘]"), "cannot contain specially formatted single or double quotes: [“‘]"),
			StringMatch(regexp.MustCompile(`[\p{L}\p{M}\p{Z}\p{S}\p{N}\p{P}]*`), `must satisfy regular expression pattern: [\p{L}\p{M}\p{Z}\p{S}\p{N}\p{P}]*)`),
		), Source: "internal/service/iam/role.go, description: validation.All(StringLenBetween(0, 1000), StringDoesNotMatch([“‘]), StringMatch([\\p{L}\\p{M}\\p{Z}\\p{S}\\p{N}\\p{P}]*))"},
		{Property: "assumeRolePolicy", Attr: "assume_role_policy", Check: ValidIAMPolicyJSON(),
			Source: "internal/service/iam/role.go, assume_role_policy: Required, verify.ValidIAMPolicyJSON (internal/verify/validate.go)"},
		{Property: "maxSessionDuration", Attr: "max_session_duration", Check: IntBetween(3600, 43200),
			Source: "internal/service/iam/role.go, max_session_duration: validation.IntBetween(3600, 43200), Default 3600"},
		{Property: "path", Attr: "path", Check: StringLenBetween(0, 512),
			Source: "internal/service/iam/role.go, path: validation.StringLenBetween(0, 512), Default \"/\""},
		{Property: "permissionsBoundary", Attr: "permissions_boundary", Check: ValidARN(),
			Source: "internal/service/iam/role.go, permissions_boundary: verify.ValidARN"},
		tagsRule("internal/service/iam/role.go"),
	},
	// internal/service/iam/role_policy.go (SDKv2).
	"aws:iam/rolePolicy:RolePolicy": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), iamResourceName(128)),
			Source: "internal/service/iam/role_policy.go, name: ConflictsWith name_prefix, validRolePolicyName = validResourceName(rolePolicyNameMaxLen = 128) (internal/service/iam/validate.go)"},
		{Property: "role", Attr: "role", Check: iamRolePolicyRole(),
			Source: "internal/service/iam/role_policy.go, role: validRolePolicyRole (internal/service/iam/validate.go: StringLenBetween(1, 128), " +
				"StringMatch([\\w+=,.@-]+, \"\"), \"%q must be the role's name not its ARN\" when verify.ValidARN accepts it)"},
		{Property: "policy", Attr: "policy", Check: ValidIAMPolicyJSON(),
			Source: "internal/service/iam/role_policy.go, policy: Required, verify.ValidIAMPolicyJSON (no size check in v5.100.0: the " +
				"ValidIAMPolicyJSON(10240) variant is the unmerged hashicorp/terraform-provider-aws#33088)"},
	},
	// internal/service/iam/role_policy_attachment.go (SDKv2).
	"aws:iam/rolePolicyAttachment:RolePolicyAttachment": {
		{Property: "role", Attr: "role",
			Source: "internal/service/iam/role_policy_attachment.go, role: TypeString, Required, ForceNew, no ValidateFunc"},
		{Property: "policyArn", Attr: "policy_arn", Check: ValidARN(),
			Source: "internal/service/iam/role_policy_attachment.go, policy_arn: verify.ValidARN"},
	},
	// internal/service/iam/service_linked_role.go (SDKv2).
	"aws:iam/serviceLinkedRole:ServiceLinkedRole": {
		{Property: "awsServiceName", Attr: "aws_service_name",
			Check:  StringMatch(regexp.MustCompile(`\.`), "must be a full service hostname e.g. elasticbeanstalk.amazonaws.com"),
			Source: "internal/service/iam/service_linked_role.go, aws_service_name: validation.StringMatch(\\., \"must be a full service hostname e.g. elasticbeanstalk.amazonaws.com\")"},
		{Property: "customSuffix", Attr: "custom_suffix",
			Source: "internal/service/iam/service_linked_role.go, custom_suffix: TypeString, Optional, ForceNew, no ValidateFunc"},
		{Property: "description", Attr: "description",
			Source: "internal/service/iam/service_linked_role.go, description: TypeString, Optional, no ValidateFunc"},
		tagsRule("internal/service/iam/service_linked_role.go"),
	},

	// internal/service/events/rule.go (SDKv2).
	"aws:cloudwatch/eventRule:EventRule": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), eventsName(64)),
			Source: "internal/service/events/rule.go, name: ConflictsWith name_prefix, validateRuleName (internal/service/events/validate.go: " +
				"\"%q cannot be longer than 64 characters: %q\", \"%q doesn't comply with restrictions (%q): %q\" against ^[0-9A-Za-z_.-]+$)"},
		{Property: "description", Attr: "description", Check: StringLenBetween(0, 512),
			Source: "internal/service/events/rule.go, description: validation.StringLenBetween(0, 512)"},
		{Property: "eventPattern", Attr: "event_pattern", Check: eventPatternValue(),
			Source: "internal/service/events/rule.go, event_pattern: validateEventPatternValue() (valid JSON, at most 4096 characters once " +
				"normalized), AtLeastOneOf schedule_expression, event_pattern (satisfied when it is set)"},
		{Property: "scheduleExpression", Attr: "schedule_expression", Check: StringLenBetween(0, 256),
			Source: "internal/service/events/rule.go, schedule_expression: validation.StringLenBetween(0, 256), AtLeastOneOf schedule_expression, event_pattern"},
		{Property: "roleArn", Attr: "role_arn", Check: ValidARN(),
			Source: "internal/service/events/rule.go, role_arn: verify.ValidARN"},
		tagsRule("internal/service/events/rule.go"),
	},
	// internal/service/events/target.go (SDKv2).
	"aws:cloudwatch/eventTarget:EventTarget": {
		{Property: "rule", Attr: "rule", Check: eventsName(64),
			Source: "internal/service/events/target.go, rule: Required, ForceNew, validateRuleName (internal/service/events/validate.go)"},
		{Property: "targetId", Attr: "target_id", Check: eventsName(64),
			Source: "internal/service/events/target.go, target_id: validateTargetID (internal/service/events/validate.go: at most 64 characters, ^[0-9A-Za-z_.-]+$)"},
		{Property: "arn", Attr: "arn", Check: ValidARN(),
			Source: "internal/service/events/target.go, arn: Required, verify.ValidARN"},
		{Property: "roleArn", Attr: "role_arn", Check: ValidARN(),
			Source: "internal/service/events/target.go, role_arn: verify.ValidARN"},
		{Property: "sqsTarget.messageGroupId", Attr: "sqs_target.0.message_group_id",
			Source: "internal/service/events/target.go, sqs_target (MaxItems 1).message_group_id: TypeString, Optional, no ValidateFunc"},
		{Property: "retryPolicy.maximumEventAgeInSeconds", Attr: "retry_policy.0.maximum_event_age_in_seconds", Check: IntBetween(0, 86400),
			Source: "internal/service/events/target.go, retry_policy (MaxItems 1).maximum_event_age_in_seconds: validation.IntBetween(0, 86400)"},
		{Property: "retryPolicy.maximumRetryAttempts", Attr: "retry_policy.0.maximum_retry_attempts", Check: IntBetween(0, 185),
			Source: "internal/service/events/target.go, retry_policy (MaxItems 1).maximum_retry_attempts: validation.IntBetween(0, 185)"},
		{Property: "deadLetterConfig.arn", Attr: "dead_letter_config.0.arn", Check: ValidARN(),
			Source: "internal/service/events/target.go, dead_letter_config (MaxItems 1).arn: verify.ValidARN"},
		{Property: "input", Attr: "input", Check: Before(ConflictsWith(map[string]string{"inputPath": "input_path", "inputTransformer": "input_transformer"}), All(StringIsJSON(), StringLenBetween(0, 8192))),
			Source: "internal/service/events/target.go, input: validation.All(StringIsJSON, StringLenBetween(0, 8192)), ConflictsWith input_path, input_transformer"},
		{Property: "eventBusName", Attr: "event_bus_name", Check: eventBusNameOrARN(),
			Source: "internal/service/events/target.go, event_bus_name: validBusNameOrARN (internal/service/events/validate.go), Default \"default\""},
	},
	// internal/service/cloudwatch/metric_alarm.go (SDKv2).
	"aws:cloudwatch/metricAlarm:MetricAlarm": {
		{Property: "name", Attr: "alarm_name", Check: StringLenBetween(1, 255),
			Source: "internal/service/cloudwatch/metric_alarm.go, alarm_name: Required, ForceNew, validation.StringLenBetween(1, 255)"},
		{Property: "alarmDescription", Attr: "alarm_description", Check: StringLenBetween(0, 1024),
			Source: "internal/service/cloudwatch/metric_alarm.go, alarm_description: validation.StringLenBetween(0, 1024)"},
		{Property: "namespace", Attr: "namespace", Check: Before(
			ConflictsWith(map[string]string{"metricQueries": "metric_query"}),
			All(StringLenBetween(1, 255), StringMatch(regexp.MustCompile(`[^:].*`), "must not contain colon characters")),
		), Source: "internal/service/cloudwatch/metric_alarm.go, namespace: ConflictsWith metric_query, validation.All(StringLenBetween(1, 255), StringMatch([^:].*, \"must not contain colon characters\"))"},
		{Property: "metricName", Attr: "metric_name", Check: Before(
			ConflictsWith(map[string]string{"metricQueries": "metric_query"}),
			All(StringLenBetween(1, 255), metricAlarmStatistic()),
		), Source: "internal/service/cloudwatch/metric_alarm.go, metric_name: ConflictsWith metric_query, validation.StringLenBetween(1, 255); " +
			"CustomizeDiff: \"One of `statistic` or `extended_statistic` must be set for a cloudwatch metric alarm\" when metric_name is set with neither or both"},
		{Property: "statistic", Attr: "statistic", Check: Before(
			ConflictsWith(map[string]string{"extendedStatistic": "extended_statistic", "metricQueries": "metric_query"}),
			Enum(cloudwatchStatistics...),
		), Source: "internal/service/cloudwatch/metric_alarm.go, statistic: ConflictsWith extended_statistic, metric_query; enum.Validate[types.Statistic]()"},
		{Property: "dimensions", Attr: "dimensions", Check: ConflictsWith(map[string]string{"metricQueries": "metric_query"}),
			Source: "internal/service/cloudwatch/metric_alarm.go, dimensions: TypeMap of strings, ConflictsWith metric_query, no ValidateFunc"},
		{Property: "period", Attr: "period", Check: Before(
			ConflictsWith(map[string]string{"metricQueries": "metric_query"}),
			Any(IntInSlice(10, 20, 30), IntDivisibleBy(60)),
		), Source: "internal/service/cloudwatch/metric_alarm.go, period: ConflictsWith metric_query, validation.Any(IntInSlice([]int{10, 20, 30}), IntDivisibleBy(60))"},
		{Property: "evaluationPeriods", Attr: "evaluation_periods", Check: IntAtLeast(1),
			Source: "internal/service/cloudwatch/metric_alarm.go, evaluation_periods: Required, validation.IntAtLeast(1)"},
		{Property: "datapointsToAlarm", Attr: "datapoints_to_alarm", Check: IntAtLeast(1),
			Source: "internal/service/cloudwatch/metric_alarm.go, datapoints_to_alarm: validation.IntAtLeast(1)"},
		{Property: "threshold", Attr: "threshold", Check: ConflictsWith(map[string]string{"thresholdMetricId": "threshold_metric_id"}),
			Source: "internal/service/cloudwatch/metric_alarm.go, threshold: TypeFloat, ConflictsWith threshold_metric_id, no ValidateFunc"},
		{Property: "comparisonOperator", Attr: "comparison_operator", Check: Enum(cloudwatchComparisonOperators...),
			Source: "internal/service/cloudwatch/metric_alarm.go, comparison_operator: Required, enum.Validate[types.ComparisonOperator]()"},
		{Property: "treatMissingData", Attr: "treat_missing_data", Check: StringInSlice([]string{"breaching", "ignore", "missing", "notBreaching"}, true),
			Source: "internal/service/cloudwatch/metric_alarm.go, treat_missing_data: validation.StringInSlice(missingData_Values(), true) (consts.go), Default \"missing\""},
		{Property: "alarmActions", Attr: "alarm_actions",
			Source: "internal/service/cloudwatch/metric_alarm.go, alarm_actions: TypeSet of strings, no MaxItems"},
		{Property: "alarmActions[]", Attr: "alarm_actions.#", Check: Any(ValidARN(), ec2AutomateARN()),
			Source: "internal/service/cloudwatch/metric_alarm.go, alarm_actions elements: validation.Any(verify.ValidARN, validEC2AutomateARN (validate.go))"},
		{Property: "okActions", Attr: "ok_actions", Check: MaxItems(5),
			Source: "internal/service/cloudwatch/metric_alarm.go, ok_actions: TypeSet of strings, MaxItems 5"},
		{Property: "okActions[]", Attr: "ok_actions.#", Check: Any(ValidARN(), ec2AutomateARN()),
			Source: "internal/service/cloudwatch/metric_alarm.go, ok_actions elements: validation.Any(verify.ValidARN, validEC2AutomateARN)"},
		{Property: "insufficientDataActions", Attr: "insufficient_data_actions", Check: MaxItems(5),
			Source: "internal/service/cloudwatch/metric_alarm.go, insufficient_data_actions: TypeSet of strings, MaxItems 5"},
		{Property: "insufficientDataActions[]", Attr: "insufficient_data_actions.#", Check: Any(ValidARN(), ec2AutomateARN()),
			Source: "internal/service/cloudwatch/metric_alarm.go, insufficient_data_actions elements: validation.Any(verify.ValidARN, validEC2AutomateARN)"},
		{Property: "metricQueries", Attr: "metric_query", Check: Before(ConflictsWith(map[string]string{"metricName": "metric_name"}), metricQueryExpressionOrMetric()),
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query: TypeSet, ConflictsWith metric_name; CustomizeDiff: " +
				"\"No metric_query may have both `expression` and a `metric` specified\""},
		{Property: "metricQueries[].id", Attr: "metric_query.#.id", Check: StringLenBetween(1, 255),
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.id: Required, validation.StringLenBetween(1, 255)"},
		{Property: "metricQueries[].label", Attr: "metric_query.#.label",
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.label: TypeString, Optional, no ValidateFunc"},
		{Property: "metricQueries[].expression", Attr: "metric_query.#.expression", Check: StringLenBetween(1, 1024),
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.expression: validation.StringLenBetween(1, 1024)"},
		{Property: "metricQueries[].returnData", Attr: "metric_query.#.return_data",
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.return_data: TypeBool, Default false, no ValidateFunc"},
		{Property: "metricQueries[].period", Attr: "metric_query.#.period", Check: Any(IntInSlice(1, 5, 10, 20, 30), IntDivisibleBy(60)),
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.period: validation.Any(IntInSlice([]int{1, 5, 10, 20, 30}), IntDivisibleBy(60))"},
		{Property: "metricQueries[].metric.namespace", Attr: "metric_query.#.metric.0.namespace", Check: All(
			StringLenBetween(1, 255),
			StringMatch(regexp.MustCompile(`[^:].*`), "must not contain colon characters"),
		), Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.metric (MaxItems 1).namespace: validation.All(StringLenBetween(1, 255), StringMatch([^:].*, \"must not contain colon characters\"))"},
		{Property: "metricQueries[].metric.metricName", Attr: "metric_query.#.metric.0.metric_name", Check: StringLenBetween(1, 255),
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.metric.metric_name: Required, validation.StringLenBetween(1, 255)"},
		{Property: "metricQueries[].metric.stat", Attr: "metric_query.#.metric.0.stat", Check: Any(
			Enum(cloudwatchStatistics...),
			Diag(StringMatch(regexp.MustCompile(`^((p|(tm)|(wm)|(tc)|(ts))((\d{1,2}(\.\d{1,2})?)|(100))|(IQM)|(((TM)|(WM)|(PR)|(TC)|(TS)))\((\d+(\.\d+)?%?)?:(\d+(\.\d+)?%?)?\))$`),
				"invalid statistic, see: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Statistics-definitions.html")),
		), Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.metric.stat: Required, validation.AnyDiag(enum.Validate[types.Statistic](), " +
			"ToDiagFunc(StringMatch(<extended statistic pattern>, \"invalid statistic, see: ...Statistics-definitions.html\")))"},
		{Property: "metricQueries[].metric.period", Attr: "metric_query.#.metric.0.period", Check: Any(IntInSlice(1, 5, 10, 20, 30), IntDivisibleBy(60)),
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.metric.period: Required, validation.Any(IntInSlice([]int{1, 5, 10, 20, 30}), IntDivisibleBy(60))"},
		{Property: "metricQueries[].metric.dimensions", Attr: "metric_query.#.metric.0.dimensions",
			Source: "internal/service/cloudwatch/metric_alarm.go, metric_query.metric.dimensions: TypeMap of strings, no ValidateFunc"},
		tagsRule("internal/service/cloudwatch/metric_alarm.go"),
	},
	// internal/service/logs/group.go (SDKv2).
	"aws:cloudwatch/logGroup:LogGroup": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), logGroupName(512)),
			Source: "internal/service/logs/group.go, name: ConflictsWith name_prefix, validLogGroupName (internal/service/logs/validate.go: at most 512 characters, ^[0-9A-Za-z_./#-]+$)"},
		{Property: "retentionInDays", Attr: "retention_in_days", Check: IntInSlice(0, 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653),
			Source: "internal/service/logs/group.go, retention_in_days: validation.IntInSlice([]int{0, 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}), Default 0"},
		{Property: "kmsKeyId", Attr: "kms_key_id",
			Source: "internal/service/logs/group.go, kms_key_id: TypeString, Optional, no ValidateFunc"},
		tagsRule("internal/service/logs/group.go"),
	},
	// internal/service/cloudwatch/dashboard.go (SDKv2).
	"aws:cloudwatch/dashboard:Dashboard": {
		{Property: "dashboardName", Attr: "dashboard_name", Check: dashboardName(),
			Source: "internal/service/cloudwatch/dashboard.go, dashboard_name: Required, ForceNew, validDashboardName (internal/service/cloudwatch/validate.go: at most 255 characters, ^[0-9A-Za-z_-]+$)"},
		{Property: "dashboardBody", Attr: "dashboard_body", Check: StringIsJSON(),
			Source: "internal/service/cloudwatch/dashboard.go, dashboard_body: Required, validation.StringIsJSON"},
	},

	// internal/service/scheduler/schedule_group.go (SDKv2; every validator wrapped in validation.ToDiagFunc).
	"aws:scheduler/scheduleGroup:ScheduleGroup": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), Diag(All(
			StringLenBetween(1, 64),
			StringMatch(regexp.MustCompile(`^[0-9A-Za-z_.-]+$`), `The name must consist of alphanumerics, hyphens, and underscores.`),
		))), Source: "internal/service/scheduler/schedule_group.go, name: ConflictsWith name_prefix, ToDiagFunc(All(StringLenBetween(1, 64), " +
			"StringMatch(^[0-9A-Za-z_.-]+$, \"The name must consist of alphanumerics, hyphens, and underscores.\")))"},
		tagsRule("internal/service/scheduler/schedule_group.go"),
	},
	// internal/service/scheduler/schedule.go (SDKv2; every validator wrapped in validation.ToDiagFunc).
	"aws:scheduler/schedule:Schedule": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), Diag(All(
			StringLenBetween(1, 64),
			StringMatch(regexp.MustCompile(`^[0-9A-Za-z_.-]+$`), `The name must consist of alphanumerics, hyphens, and underscores.`),
		))), Source: "internal/service/scheduler/schedule.go, name: ConflictsWith name_prefix, ToDiagFunc(All(StringLenBetween(1, 64), " +
			"StringMatch(^[0-9A-Za-z_.-]+$, \"The name must consist of alphanumerics, hyphens, and underscores.\")))"},
		{Property: "groupName", Attr: "group_name", Check: Diag(StringLenBetween(1, 64)),
			Source: "internal/service/scheduler/schedule.go, group_name: ToDiagFunc(StringLenBetween(1, 64))"},
		{Property: "description", Attr: "description", Check: Diag(StringLenBetween(0, 512)),
			Source: "internal/service/scheduler/schedule.go, description: ToDiagFunc(StringLenBetween(0, 512))"},
		{Property: "scheduleExpression", Attr: "schedule_expression", Check: Diag(StringLenBetween(1, 256)),
			Source: "internal/service/scheduler/schedule.go, schedule_expression: Required, ToDiagFunc(StringLenBetween(1, 256))"},
		{Property: "scheduleExpressionTimezone", Attr: "schedule_expression_timezone", Check: Diag(StringLenBetween(1, 50)),
			Source: "internal/service/scheduler/schedule.go, schedule_expression_timezone: ToDiagFunc(StringLenBetween(1, 50)), Default \"UTC\""},
		{Property: "state", Attr: "state", Check: Enum("ENABLED", "DISABLED"),
			Source: "internal/service/scheduler/schedule.go, state: enum.Validate[types.ScheduleState](), Default \"ENABLED\""},
		{Property: "flexibleTimeWindow.mode", Attr: "flexible_time_window.0.mode", Check: Enum("OFF", "FLEXIBLE"),
			Source: "internal/service/scheduler/schedule.go, flexible_time_window (Required, MaxItems 1).mode: Required, enum.Validate[types.FlexibleTimeWindowMode]()"},
		{Property: "flexibleTimeWindow.maximumWindowInMinutes", Attr: "flexible_time_window.0.maximum_window_in_minutes", Check: Diag(IntBetween(1, 1440)),
			Source: "internal/service/scheduler/schedule.go, flexible_time_window.maximum_window_in_minutes: ToDiagFunc(IntBetween(1, 1440))"},
		{Property: "target.arn", Attr: "target.0.arn", Check: Diag(ValidARN()),
			Source: "internal/service/scheduler/schedule.go, target (Required, MaxItems 1).arn: Required, ToDiagFunc(verify.ValidARN)"},
		{Property: "target.roleArn", Attr: "target.0.role_arn", Check: Diag(ValidARN()),
			Source: "internal/service/scheduler/schedule.go, target.role_arn: Required, ToDiagFunc(verify.ValidARN)"},
		{Property: "target.input", Attr: "target.0.input", Check: Diag(StringLenBetween(1, int(^uint(0)>>1))),
			Source: "internal/service/scheduler/schedule.go, target.input: ToDiagFunc(StringLenBetween(1, math.MaxInt))"},
		{Property: "target.eventbridgeParameters.source", Attr: "target.0.eventbridge_parameters.0.source", Check: Diag(StringLenBetween(1, 256)),
			Source: "internal/service/scheduler/schedule.go, target.eventbridge_parameters (MaxItems 1).source: Required, ToDiagFunc(StringLenBetween(1, 256))"},
		{Property: "target.eventbridgeParameters.detailType", Attr: "target.0.eventbridge_parameters.0.detail_type", Check: Diag(StringLenBetween(1, 128)),
			Source: "internal/service/scheduler/schedule.go, target.eventbridge_parameters.detail_type: Required, ToDiagFunc(StringLenBetween(1, 128))"},
		{Property: "target.retryPolicy.maximumEventAgeInSeconds", Attr: "target.0.retry_policy.0.maximum_event_age_in_seconds", Check: Diag(IntBetween(60, 86400)),
			Source: "internal/service/scheduler/schedule.go, target.retry_policy (MaxItems 1).maximum_event_age_in_seconds: ToDiagFunc(IntBetween(60, 86400)), Default 86400"},
		{Property: "target.retryPolicy.maximumRetryAttempts", Attr: "target.0.retry_policy.0.maximum_retry_attempts", Check: Diag(IntBetween(0, 185)),
			Source: "internal/service/scheduler/schedule.go, target.retry_policy.maximum_retry_attempts: ToDiagFunc(IntBetween(0, 185)), Default 185"},
		{Property: "target.deadLetterConfig.arn", Attr: "target.0.dead_letter_config.0.arn", Check: Diag(ValidARN()),
			Source: "internal/service/scheduler/schedule.go, target.dead_letter_config (MaxItems 1).arn: Required, ToDiagFunc(verify.ValidARN)"},
		{Property: "kmsKeyArn", Attr: "kms_key_arn", Check: Diag(ValidARN()),
			Source: "internal/service/scheduler/schedule.go, kms_key_arn: ToDiagFunc(verify.ValidARN)"},
	},

	// internal/service/s3/bucket.go (SDKv2): pulumi-aws v6's BucketV2 is aws_s3_bucket.
	"aws:s3/bucketV2:BucketV2": {
		{Property: "bucket", Attr: "bucket", Check: Before(ConflictsWith(map[string]string{"bucketPrefix": "bucket_prefix"}), StringLenBetween(0, 63)),
			Source: "internal/service/s3/bucket.go, bucket: ConflictsWith bucket_prefix, validation.StringLenBetween(0, 63) (the bucket naming rules are " +
				"checked at create, validBucketName, not at plan)"},
		{Property: "bucketPrefix", Attr: "bucket_prefix", Check: Before(ConflictsWith(map[string]string{"bucket": "bucket"}), StringLenBetween(0, 37)),
			Source: "internal/service/s3/bucket.go, bucket_prefix: ConflictsWith bucket, validation.StringLenBetween(0, 63-id.UniqueIDSuffixLength = 37)"},
		{Property: "objectLockEnabled", Attr: "object_lock_enabled", Check: ConflictsWith(map[string]string{"objectLockConfiguration": "object_lock_configuration"}),
			Source: "internal/service/s3/bucket.go, object_lock_enabled: TypeBool, Optional, Computed, ForceNew, ConflictsWith object_lock_configuration"},
		{Property: "forceDestroy", Attr: "force_destroy",
			Source: "internal/service/s3/bucket.go, force_destroy: TypeBool, Default false, no ValidateFunc"},
		tagsRule("internal/service/s3/bucket.go"),
	},
	// internal/service/s3/bucket_versioning.go (SDKv2).
	"aws:s3/bucketVersioningV2:BucketVersioningV2": {
		{Property: "bucket", Attr: "bucket", Check: StringLenBetween(1, 63),
			Source: "internal/service/s3/bucket_versioning.go, bucket: Required, ForceNew, validation.StringLenBetween(1, 63)"},
		{Property: "versioningConfiguration.status", Attr: "versioning_configuration.0.status", Check: StringInSlice([]string{"Enabled", "Suspended", "Disabled"}, false),
			Source: "internal/service/s3/bucket_versioning.go, versioning_configuration (Required, MaxItems 1).status: Required, " +
				"validation.StringInSlice(bucketVersioningStatus_Values() = Enabled, Suspended + Disabled, false)"},
		{Property: "versioningConfiguration.mfaDelete", Attr: "versioning_configuration.0.mfa_delete", Check: StringInSlice([]string{"Enabled", "Disabled"}, false),
			Source: "internal/service/s3/bucket_versioning.go, versioning_configuration.mfa_delete: validation.StringInSlice(MFADelete values, false)"},
		{Property: "expectedBucketOwner", Attr: "expected_bucket_owner", Check: accountID(),
			Source: "internal/service/s3/bucket_versioning.go, expected_bucket_owner: verify.ValidAccountID"},
	},
	// internal/service/s3/bucket_object_lock_configuration.go (SDKv2).
	"aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2": {
		{Property: "bucket", Attr: "bucket", Check: StringLenBetween(1, 63),
			Source: "internal/service/s3/bucket_object_lock_configuration.go, bucket: Required, ForceNew, validation.StringLenBetween(1, 63)"},
		{Property: "objectLockEnabled", Attr: "object_lock_enabled", Check: Enum("Enabled"),
			Source: "internal/service/s3/bucket_object_lock_configuration.go, object_lock_enabled: enum.Validate[types.ObjectLockEnabled](), Default \"Enabled\", ForceNew"},
		{Property: "rule.defaultRetention.mode", Attr: "rule.0.default_retention.0.mode", Check: Enum("GOVERNANCE", "COMPLIANCE"),
			Source: "internal/service/s3/bucket_object_lock_configuration.go, rule (MaxItems 1).default_retention (Required, MaxItems 1).mode: enum.Validate[types.ObjectLockRetentionMode]()"},
		{Property: "rule.defaultRetention.days", Attr: "rule.0.default_retention.0.days", Check: ConflictsWith(map[string]string{"rule.defaultRetention.years": "rule.0.default_retention.0.years"}),
			Source: "internal/service/s3/bucket_object_lock_configuration.go, rule.default_retention.days: TypeInt, ConflictsWith rule.0.default_retention.0.years, no ValidateFunc"},
		{Property: "rule.defaultRetention.years", Attr: "rule.0.default_retention.0.years", Check: ConflictsWith(map[string]string{"rule.defaultRetention.days": "rule.0.default_retention.0.days"}),
			Source: "internal/service/s3/bucket_object_lock_configuration.go, rule.default_retention.years: TypeInt, ConflictsWith rule.0.default_retention.0.days, no ValidateFunc"},
		{Property: "expectedBucketOwner", Attr: "expected_bucket_owner", Check: accountID(),
			Source: "internal/service/s3/bucket_object_lock_configuration.go, expected_bucket_owner: verify.ValidAccountID"},
	},
	// internal/service/s3/bucket_server_side_encryption_configuration.go (SDKv2).
	"aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2": {
		{Property: "bucket", Attr: "bucket", Check: StringLenBetween(1, 63),
			Source: "internal/service/s3/bucket_server_side_encryption_configuration.go, bucket: Required, ForceNew, validation.StringLenBetween(1, 63)"},
		{Property: "rules[].applyServerSideEncryptionByDefault.sseAlgorithm", Attr: "rule.#.apply_server_side_encryption_by_default.0.sse_algorithm",
			Check: Enum("AES256", "aws:kms", "aws:kms:dsse"),
			Source: "internal/service/s3/bucket_server_side_encryption_configuration.go, rule (TypeSet).apply_server_side_encryption_by_default (MaxItems 1).sse_algorithm: " +
				"Required, enum.Validate[types.ServerSideEncryption]() (aws:fsx came with aws-sdk-go-v2 service/s3 v1.82.0, 2025-06-25, after v5.100.0)"},
		{Property: "rules[].applyServerSideEncryptionByDefault.kmsMasterKeyId", Attr: "rule.#.apply_server_side_encryption_by_default.0.kms_master_key_id",
			Source: "internal/service/s3/bucket_server_side_encryption_configuration.go, rule.apply_server_side_encryption_by_default.kms_master_key_id: TypeString, no ValidateFunc"},
		{Property: "rules[].bucketKeyEnabled", Attr: "rule.#.bucket_key_enabled",
			Source: "internal/service/s3/bucket_server_side_encryption_configuration.go, rule.bucket_key_enabled: TypeBool, no ValidateFunc"},
		{Property: "expectedBucketOwner", Attr: "expected_bucket_owner", Check: accountID(),
			Source: "internal/service/s3/bucket_server_side_encryption_configuration.go, expected_bucket_owner: verify.ValidAccountID"},
	},
	// internal/service/s3/bucket_public_access_block.go (SDKv2).
	"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": {
		{Property: "bucket", Attr: "bucket",
			Source: "internal/service/s3/bucket_public_access_block.go, bucket: TypeString, Required, ForceNew, no ValidateFunc"},
		{Property: "blockPublicAcls", Attr: "block_public_acls",
			Source: "internal/service/s3/bucket_public_access_block.go, block_public_acls: TypeBool, Default false, no ValidateFunc"},
		{Property: "blockPublicPolicy", Attr: "block_public_policy",
			Source: "internal/service/s3/bucket_public_access_block.go, block_public_policy: TypeBool, Default false, no ValidateFunc"},
		{Property: "ignorePublicAcls", Attr: "ignore_public_acls",
			Source: "internal/service/s3/bucket_public_access_block.go, ignore_public_acls: TypeBool, Default false, no ValidateFunc"},
		{Property: "restrictPublicBuckets", Attr: "restrict_public_buckets",
			Source: "internal/service/s3/bucket_public_access_block.go, restrict_public_buckets: TypeBool, Default false, no ValidateFunc"},
	},
	// internal/service/s3/bucket_policy.go (SDKv2).
	"aws:s3/bucketPolicy:BucketPolicy": {
		{Property: "bucket", Attr: "bucket",
			Source: "internal/service/s3/bucket_policy.go, bucket: TypeString, Required, ForceNew, no ValidateFunc"},
		{Property: "policy", Attr: "policy", Check: StringIsJSON(),
			Source: "internal/service/s3/bucket_policy.go, policy: sdkv2.IAMPolicyDocumentSchemaRequired() (internal/sdkv2/schema.go: validation.StringIsJSON)"},
	},

	// internal/service/lambda/function.go (SDKv2).
	"aws:lambda/function:Function": {
		{Property: "name", Attr: "function_name", Check: All(
			StringMatch(regexp.MustCompile(`^(arn:[\w-]+:lambda:)?([a-z]{2}-(?:[a-z]+-){1,2}\d{1}:)?(\d{12}:)?(function:)?([0-9A-Za-z_-]+)(:(\$LATEST|[0-9A-Za-z_-]+))?$`),
				"must be valid function name or function ARN"),
			StringLenBetween(1, 140),
		), Source: "internal/service/lambda/function.go, function_name: Required, ForceNew, validFunctionName() (internal/service/lambda/validate.go: " +
			"StringMatch(<name or ARN pattern>, \"must be valid function name or function ARN\"), StringLenBetween(1, 140); the 64-character check of the " +
			"v6 line's source is the unmerged hashicorp/terraform-provider-aws#43755)"},
		{Property: "description", Attr: "description",
			Source: "internal/service/lambda/function.go, description: TypeString, Optional, no ValidateFunc"},
		{Property: "role", Attr: "role", Check: ValidARN(),
			Source: "internal/service/lambda/function.go, role: Required, verify.ValidARN (since hashicorp/terraform-provider-aws#29721)"},
		{Property: "runtime", Attr: "runtime", Check: Enum(lambdaRuntimes...),
			Source: "internal/service/lambda/function.go, runtime: enum.Validate[awstypes.Runtime]() (the runtimes of aws-sdk-go-v2 service/lambda before June 2025: " +
				"nodejs24.x, java25, python3.14, dotnet10 and later came after v5.100.0)"},
		{Property: "architectures", Attr: "architectures", Check: MaxItems(1),
			Source: "internal/service/lambda/function.go, architectures: TypeList of strings, Optional, Computed, MaxItems 1"},
		{Property: "architectures[]", Attr: "architectures.#", Check: Enum("x86_64", "arm64"),
			Source: "internal/service/lambda/function.go, architectures elements: enum.Validate[awstypes.Architecture]()"},
		{Property: "handler", Attr: "handler", Check: StringLenBetween(1, 128),
			Source: "internal/service/lambda/function.go, handler: validation.StringLenBetween(1, 128) (since v2.54.0, hashicorp/terraform-provider-aws#12411)"},
		{Property: "code", Attr: "filename", Check: ExactlyOneOf(map[string]string{"imageUri": "image_uri", "s3Bucket": "s3_bucket"}),
			Source: "internal/service/lambda/function.go, filename (pulumi-aws's `code` archive): ExactlyOneOf filename, image_uri, s3_bucket, no ValidateFunc"},
		{Property: "sourceCodeHash", Attr: "source_code_hash",
			Source: "internal/service/lambda/function.go, source_code_hash: TypeString, Optional, Computed, no ValidateFunc"},
		{Property: "memorySize", Attr: "memory_size", Check: IntBetween(128, 10240),
			Source: "internal/service/lambda/function.go, memory_size: validation.IntBetween(128, 10240), Default 128 (hashicorp/terraform-provider-aws#29721)"},
		{Property: "reservedConcurrentExecutions", Attr: "reserved_concurrent_executions", Check: IntAtLeast(-1),
			Source: "internal/service/lambda/function.go, reserved_concurrent_executions: validation.IntAtLeast(-1), Default -1"},
		{Property: "timeout", Attr: "timeout", Check: IntBetween(1, 900),
			Source: "internal/service/lambda/function.go, timeout: validation.IntBetween(1, 900), Default 3 (hashicorp/terraform-provider-aws#29721)"},
		{Property: "environment.variables", Attr: "environment.0.variables",
			Source: "internal/service/lambda/function.go, environment (MaxItems 1).variables: TypeMap of strings, no ValidateFunc"},
		{Property: "loggingConfig.logFormat", Attr: "logging_config.0.log_format", Check: Enum("JSON", "Text"),
			Source: "internal/service/lambda/function.go, logging_config (MaxItems 1).log_format: Required, enum.Validate[awstypes.LogFormat]()"},
		{Property: "loggingConfig.logGroup", Attr: "logging_config.0.log_group", Check: All(
			StringMatch(regexp.MustCompile(`^[0-9A-Za-z_./#-]+$`), "must contain alphanumeric characters, underscores, hyphens, slashes, hash signs and dots only"),
			StringLenBetween(1, 512),
		), Source: "internal/service/lambda/function.go, logging_config.log_group: validLogGroupName() (internal/service/lambda/validate.go: StringMatch(^[0-9A-Za-z_./#-]+$, " +
			"\"must contain alphanumeric characters, underscores, hyphens, slashes, hash signs and dots only\"), StringLenBetween(1, 512))"},
		{Property: "loggingConfig.applicationLogLevel", Attr: "logging_config.0.application_log_level", Check: Enum("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"),
			Source: "internal/service/lambda/function.go, logging_config.application_log_level: enum.Validate[awstypes.ApplicationLogLevel]()"},
		{Property: "loggingConfig.systemLogLevel", Attr: "logging_config.0.system_log_level", Check: Enum("DEBUG", "INFO", "WARN"),
			Source: "internal/service/lambda/function.go, logging_config.system_log_level: enum.Validate[awstypes.SystemLogLevel]()"},
		tagsRule("internal/service/lambda/function.go"),
	},
	// internal/service/lambda/event_source_mapping.go (SDKv2).
	"aws:lambda/eventSourceMapping:EventSourceMapping": {
		{Property: "eventSourceArn", Attr: "event_source_arn", Check: ExactlyOneOf(map[string]string{"selfManagedEventSource": "self_managed_event_source"}),
			Source: "internal/service/lambda/event_source_mapping.go, event_source_arn: ExactlyOneOf event_source_arn, self_managed_event_source, ForceNew, no ValidateFunc"},
		{Property: "functionName", Attr: "function_name",
			Source: "internal/service/lambda/event_source_mapping.go, function_name: TypeString, Required, no ValidateFunc"},
		{Property: "batchSize", Attr: "batch_size",
			Source: "internal/service/lambda/event_source_mapping.go, batch_size: TypeInt, Optional, no ValidateFunc"},
		{Property: "maximumBatchingWindowInSeconds", Attr: "maximum_batching_window_in_seconds",
			Source: "internal/service/lambda/event_source_mapping.go, maximum_batching_window_in_seconds: TypeInt, Optional, no ValidateFunc " +
				"(the 0-300 of its documentation is the Lambda API's)"},
		{Property: "functionResponseTypes", Attr: "function_response_types",
			Source: "internal/service/lambda/event_source_mapping.go, function_response_types: TypeSet of strings, Optional, no MaxItems"},
		{Property: "functionResponseTypes[]", Attr: "function_response_types.#", Check: Enum("ReportBatchItemFailures"),
			Source: "internal/service/lambda/event_source_mapping.go, function_response_types elements: enum.Validate[awstypes.FunctionResponseType]()"},
		{Property: "scalingConfig.maximumConcurrency", Attr: "scaling_config.0.maximum_concurrency", Check: IntAtLeast(2),
			Source: "internal/service/lambda/event_source_mapping.go, scaling_config (MaxItems 1).maximum_concurrency: validation.IntAtLeast(2)"},
		{Property: "provisionedPollerConfig.maximumPollers", Attr: "provisioned_poller_config.0.maximum_pollers", Check: IntBetween(1, 2000),
			Source: "internal/service/lambda/event_source_mapping.go, provisioned_poller_config (MaxItems 1).maximum_pollers: validation.IntBetween(1, 2000) " +
				"(v6.83.2's SDK: \"The range is between 1 and 2000\")"},
		{Property: "provisionedPollerConfig.minimumPollers", Attr: "provisioned_poller_config.0.minimum_pollers", Check: IntBetween(1, 200),
			Source: "internal/service/lambda/event_source_mapping.go, provisioned_poller_config.minimum_pollers: validation.IntBetween(1, 200) " +
				"(v6.83.2's SDK: \"The range is between 1 and 200\")"},
		{Property: "maximumRetryAttempts", Attr: "maximum_retry_attempts", Check: IntBetween(-1, 10000),
			Source: "internal/service/lambda/event_source_mapping.go, maximum_retry_attempts: validation.IntBetween(-1, 10_000)"},
		{Property: "enabled", Attr: "enabled",
			Source: "internal/service/lambda/event_source_mapping.go, enabled: TypeBool, Default true, no ValidateFunc"},
		tagsRule("internal/service/lambda/event_source_mapping.go"),
	},

	// internal/service/kms/key.go (SDKv2).
	"aws:kms/key:Key": {
		{Property: "description", Attr: "description", Check: StringLenBetween(0, 8192),
			Source: "internal/service/kms/key.go, description: validation.StringLenBetween(0, 8192)"},
		{Property: "customerMasterKeySpec", Attr: "customer_master_key_spec", Check: Enum(kmsCustomerMasterKeySpecs...),
			Source: "internal/service/kms/key.go, customer_master_key_spec: ForceNew, Default \"SYMMETRIC_DEFAULT\", enum.Validate[awstypes.CustomerMasterKeySpec]() " +
				"(v6.2.0 moved to KeySpec, adding ML_DSA_44/65/87: hashicorp/terraform-provider-aws#43128)"},
		{Property: "keyUsage", Attr: "key_usage", Check: Enum("SIGN_VERIFY", "ENCRYPT_DECRYPT", "GENERATE_VERIFY_MAC", "KEY_AGREEMENT"),
			Source: "internal/service/kms/key.go, key_usage: ForceNew, Default \"ENCRYPT_DECRYPT\", enum.Validate[awstypes.KeyUsageType]()"},
		{Property: "policy", Attr: "policy", Check: StringIsJSON(),
			Source: "internal/service/kms/key.go, policy: sdkv2.IAMPolicyDocumentSchemaOptionalComputed() (validation.StringIsJSON)"},
		{Property: "deletionWindowInDays", Attr: "deletion_window_in_days", Check: IntBetween(7, 30),
			Source: "internal/service/kms/key.go, deletion_window_in_days: validation.IntBetween(7, 30)"},
		{Property: "enableKeyRotation", Attr: "enable_key_rotation",
			Source: "internal/service/kms/key.go, enable_key_rotation: TypeBool, Default false, no ValidateFunc"},
		{Property: "rotationPeriodInDays", Attr: "rotation_period_in_days", Check: Before(RequiredWith(map[string]string{"enableKeyRotation": "enable_key_rotation"}), IntBetween(90, 2560)),
			Source: "internal/service/kms/key.go, rotation_period_in_days: validation.IntBetween(90, 2560), RequiredWith enable_key_rotation"},
		tagsRule("internal/service/kms/key.go"),
	},
	// internal/service/kms/alias.go (SDKv2).
	"aws:kms/alias:Alias": {
		{Property: "name", Attr: "name", Check: Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), kmsAliasName()),
			Source: "internal/service/kms/alias.go, name: ConflictsWith name_prefix, validNameForResource (internal/service/kms/validate.go: not ^(alias/aws/), " +
				"^alias/[0-9A-Za-z_/-]+$)"},
		{Property: "targetKeyId", Attr: "target_key_id",
			Source: "internal/service/kms/alias.go, target_key_id: TypeString, Required, no ValidateFunc"},
	},

	// internal/service/eks/pod_identity_association.go: a plugin-framework resource.
	"aws:eks/podIdentityAssociation:PodIdentityAssociation": {
		{Property: "clusterName", Attr: "cluster_name",
			Source: "internal/service/eks/pod_identity_association.go, cluster_name: schema.StringAttribute, Required, RequiresReplace, no Validators"},
		{Property: "namespace", Attr: "namespace",
			Source: "internal/service/eks/pod_identity_association.go, namespace: schema.StringAttribute, Required, RequiresReplace, no Validators"},
		{Property: "serviceAccount", Attr: "service_account",
			Source: "internal/service/eks/pod_identity_association.go, service_account: schema.StringAttribute, Required, RequiresReplace, no Validators"},
		{Property: "roleArn", Attr: "role_arn", Check: FrameworkARN(),
			Source: "internal/service/eks/pod_identity_association.go, role_arn: Required, CustomType fwtypes.ARNType (internal/framework/types/arn.go, Validate)"},
		tagsRule("internal/service/eks/pod_identity_association.go (tftags.TagsAttribute)"),
	},
	// internal/service/eks/access_entry.go (SDKv2).
	"aws:eks/accessEntry:AccessEntry": {
		{Property: "clusterName", Attr: "cluster_name", Check: eksClusterName(),
			Source: "internal/service/eks/access_entry.go, cluster_name: Required, ForceNew, validClusterName (internal/service/eks/validate.go: 1-100 characters, ^[0-9A-Za-z][0-9A-Za-z_-]*$)"},
		{Property: "principalArn", Attr: "principal_arn", Check: ValidARN(),
			Source: "internal/service/eks/access_entry.go, principal_arn: Required, ForceNew, verify.ValidARN"},
		{Property: "type", Attr: "type", Check: StringInSlice([]string{"EC2", "EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX", "HYBRID_LINUX", "STANDARD"}, false),
			Source: "internal/service/eks/access_entry.go, type: ForceNew, Default \"STANDARD\", validation.StringInSlice(accessEntryType_Values(), false) (internal/service/eks/consts.go)"},
		tagsRule("internal/service/eks/access_entry.go"),
	},
	// internal/service/eks/addon.go (SDKv2).
	"aws:eks/addon:Addon": {
		{Property: "clusterName", Attr: "cluster_name", Check: eksClusterName(),
			Source: "internal/service/eks/addon.go, cluster_name: Required, ForceNew, validClusterName (internal/service/eks/validate.go)"},
		{Property: "addonName", Attr: "addon_name", Check: NoZeroValues(),
			Source: "internal/service/eks/addon.go, addon_name: Required, ForceNew, validation.NoZeroValues"},
		{Property: "addonVersion", Attr: "addon_version", Check: StringMatch(regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$`), "must follow semantic version format"),
			Source: "internal/service/eks/addon.go, addon_version: validation.StringMatch(<semver pattern>, \"must follow semantic version format\")"},
		tagsRule("internal/service/eks/addon.go"),
	},
	// internal/service/ec2/ec2_tag.go (SDKv2).
	"aws:ec2/tag:Tag": {
		{Property: "resourceId", Attr: "resource_id",
			Source: "internal/service/ec2/ec2_tag.go, resource_id: TypeString, Required, ForceNew, no ValidateFunc"},
		{Property: "key", Attr: "key",
			Source: "internal/service/ec2/ec2_tag.go, key: TypeString, Required, ForceNew, no ValidateFunc"},
		{Property: "value", Attr: "value",
			Source: "internal/service/ec2/ec2_tag.go, value: TypeString, Required, no ValidateFunc"},
	},

	// internal/service/cloudformation/stack_set.go (SDKv2).
	"aws:cloudformation/stackSet:StackSet": {
		{Property: "name", Attr: "name", Check: All(
			StringLenBetween(1, 128),
			StringMatch(regexp.MustCompile(`^[A-Za-z]`), "must begin with alphabetic character"),
			StringMatch(regexp.MustCompile(`^[0-9A-Za-z-]+$`), "must contain only alphanumeric and hyphen characters"),
		), Source: "internal/service/cloudformation/stack_set.go, name: Required, ForceNew, validation.All(StringLenBetween(1, 128), " +
			"StringMatch(^[A-Za-z], \"must begin with alphabetic character\"), StringMatch(^[0-9A-Za-z-]+$, \"must contain only alphanumeric and hyphen characters\"))"},
		{Property: "description", Attr: "description", Check: StringLenBetween(0, 1024),
			Source: "internal/service/cloudformation/stack_set.go, description: validation.StringLenBetween(0, 1024)"},
		{Property: "permissionModel", Attr: "permission_model", Check: Enum("SERVICE_MANAGED", "SELF_MANAGED"),
			Source: "internal/service/cloudformation/stack_set.go, permission_model: Default \"SELF_MANAGED\", enum.Validate[awstypes.PermissionModels]()"},
		{Property: "callAs", Attr: "call_as", Check: Enum("SELF", "DELEGATED_ADMIN"),
			Source: "internal/service/cloudformation/stack_set.go, call_as: Default \"SELF\", enum.Validate[awstypes.CallAs]()"},
		{Property: "autoDeployment", Attr: "auto_deployment", Check: ConflictsWith(map[string]string{"administrationRoleArn": "administration_role_arn", "executionRoleName": "execution_role_name"}),
			Source: "internal/service/cloudformation/stack_set.go, auto_deployment: TypeList, MinItems 1, MaxItems 1, ForceNew, ConflictsWith administration_role_arn, execution_role_name"},
		{Property: "autoDeployment.enabled", Attr: "auto_deployment.0.enabled",
			Source: "internal/service/cloudformation/stack_set.go, auto_deployment.enabled: TypeBool, Optional, no ValidateFunc"},
		{Property: "autoDeployment.retainStacksOnAccountRemoval", Attr: "auto_deployment.0.retain_stacks_on_account_removal",
			Source: "internal/service/cloudformation/stack_set.go, auto_deployment.retain_stacks_on_account_removal: TypeBool, Optional, no ValidateFunc"},
		{Property: "administrationRoleArn", Attr: "administration_role_arn", Check: Before(ConflictsWith(map[string]string{"autoDeployment": "auto_deployment"}), ValidARN()),
			Source: "internal/service/cloudformation/stack_set.go, administration_role_arn: ConflictsWith auto_deployment, verify.ValidARN"},
		{Property: "executionRoleName", Attr: "execution_role_name", Check: ConflictsWith(map[string]string{"autoDeployment": "auto_deployment"}),
			Source: "internal/service/cloudformation/stack_set.go, execution_role_name: ConflictsWith auto_deployment, no ValidateFunc"},
		{Property: "managedExecution.active", Attr: "managed_execution.0.active",
			Source: "internal/service/cloudformation/stack_set.go, managed_execution (MaxItems 1).active: TypeBool, Default false, no ValidateFunc"},
		{Property: "operationPreferences.failureToleranceCount", Attr: "operation_preferences.0.failure_tolerance_count", Check: Before(
			ConflictsWith(map[string]string{"operationPreferences.failureTolerancePercentage": "operation_preferences.0.failure_tolerance_percentage"}), IntAtLeast(0)),
			Source: "internal/service/cloudformation/stack_set.go, operation_preferences (MaxItems 1).failure_tolerance_count: validation.IntAtLeast(0), ConflictsWith operation_preferences.0.failure_tolerance_percentage"},
		{Property: "operationPreferences.failureTolerancePercentage", Attr: "operation_preferences.0.failure_tolerance_percentage", Check: Before(
			ConflictsWith(map[string]string{"operationPreferences.failureToleranceCount": "operation_preferences.0.failure_tolerance_count"}), IntBetween(0, 100)),
			Source: "internal/service/cloudformation/stack_set.go, operation_preferences.failure_tolerance_percentage: validation.IntBetween(0, 100), ConflictsWith operation_preferences.0.failure_tolerance_count"},
		{Property: "operationPreferences.maxConcurrentCount", Attr: "operation_preferences.0.max_concurrent_count", Check: Before(
			ConflictsWith(map[string]string{"operationPreferences.maxConcurrentPercentage": "operation_preferences.0.max_concurrent_percentage"}), IntAtLeast(1)),
			Source: "internal/service/cloudformation/stack_set.go, operation_preferences.max_concurrent_count: validation.IntAtLeast(1), ConflictsWith operation_preferences.0.max_concurrent_percentage"},
		{Property: "operationPreferences.maxConcurrentPercentage", Attr: "operation_preferences.0.max_concurrent_percentage", Check: Before(
			ConflictsWith(map[string]string{"operationPreferences.maxConcurrentCount": "operation_preferences.0.max_concurrent_count"}), IntBetween(1, 100)),
			Source: "internal/service/cloudformation/stack_set.go, operation_preferences.max_concurrent_percentage: validation.IntBetween(1, 100), ConflictsWith operation_preferences.0.max_concurrent_count"},
		{Property: "capabilities", Attr: "capabilities",
			Source: "internal/service/cloudformation/stack_set.go, capabilities: TypeSet of strings, Optional, no MaxItems"},
		{Property: "capabilities[]", Attr: "capabilities.#", Check: Enum("CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"),
			Source: "internal/service/cloudformation/stack_set.go, capabilities elements: enum.Validate[awstypes.Capability]()"},
		{Property: "templateBody", Attr: "template_body", Check: Before(ConflictsWith(map[string]string{"templateUrl": "template_url"}), ValidStringIsJSONOrYAML()),
			Source: "internal/service/cloudformation/stack_set.go, template_body: ConflictsWith template_url, verify.ValidStringIsJSONOrYAML"},
		{Property: "parameters", Attr: "parameters",
			Source: "internal/service/cloudformation/stack_set.go, parameters: TypeMap of strings, no ValidateFunc"},
		tagsRule("internal/service/cloudformation/stack_set.go"),
	},
	// internal/service/cloudformation/stack_set_instance.go (SDKv2).
	"aws:cloudformation/stackSetInstance:StackSetInstance": {
		{Property: "stackSetName", Attr: "stack_set_name", Check: NoZeroValues(),
			Source: "internal/service/cloudformation/stack_set_instance.go, stack_set_name: Required, ForceNew, validation.NoZeroValues"},
		{Property: "callAs", Attr: "call_as", Check: Enum("SELF", "DELEGATED_ADMIN"),
			Source: "internal/service/cloudformation/stack_set_instance.go, call_as: Default \"SELF\", enum.Validate[awstypes.CallAs]()"},
		{Property: "region", Attr: "region",
			Source: "internal/service/cloudformation/stack_set_instance.go, region: TypeString, Optional, Computed, ForceNew, no ValidateFunc " +
				"(v5.100.0's own attribute; v6.0.0 renamed it stack_set_instance_region)"},
		{Property: "accountId", Attr: "account_id", Check: Before(ConflictsWith(map[string]string{"deploymentTargets": "deployment_targets"}), accountID()),
			Source: "internal/service/cloudformation/stack_set_instance.go, account_id: ConflictsWith deployment_targets, verify.ValidAccountID"},
		{Property: "deploymentTargets", Attr: "deployment_targets", Check: ConflictsWith(map[string]string{"accountId": "account_id"}),
			Source: "internal/service/cloudformation/stack_set_instance.go, deployment_targets: TypeList, MaxItems 1, ForceNew, ConflictsWith account_id"},
		{Property: "deploymentTargets.organizationalUnitIds", Attr: "deployment_targets.0.organizational_unit_ids", Check: Before(
			ConflictsWith(map[string]string{"accountId": "account_id"}),
			MinItems(1),
		), Source: "internal/service/cloudformation/stack_set_instance.go, deployment_targets.organizational_unit_ids: TypeSet, MinItems 1, ConflictsWith account_id"},
		{Property: "deploymentTargets.organizationalUnitIds[]", Attr: "deployment_targets.0.organizational_unit_ids.#",
			Check:  StringMatch(regexp.MustCompile(`^(ou-[0-9a-z]{4,32}-[0-9a-z]{8,32}|r-[0-9a-z]{4,32})$`), ""),
			Source: "internal/service/cloudformation/stack_set_instance.go, deployment_targets.organizational_unit_ids elements: validation.StringMatch(^(ou-[0-9a-z]{4,32}-[0-9a-z]{8,32}|r-[0-9a-z]{4,32})$, \"\")"},
		{Property: "retainStack", Attr: "retain_stack",
			Source: "internal/service/cloudformation/stack_set_instance.go, retain_stack: TypeBool, Default false, no ValidateFunc"},
		{Property: "parameterOverrides", Attr: "parameter_overrides",
			Source: "internal/service/cloudformation/stack_set_instance.go, parameter_overrides: TypeMap of strings, no ValidateFunc"},
	},

	// internal/service/fis/experiment_template.go (SDKv2).
	"aws:fis/experimentTemplate:ExperimentTemplate": {
		{Property: "description", Attr: "description", Check: StringLenBetween(0, 512),
			Source: "internal/service/fis/experiment_template.go, description: Required, validation.StringLenBetween(0, 512)"},
		{Property: "roleArn", Attr: "role_arn", Check: ValidARN(),
			Source: "internal/service/fis/experiment_template.go, role_arn: Required, verify.ValidARN"},
		{Property: "stopConditions[].source", Attr: "stop_condition.#.source", Check: StringInSlice([]string{"aws:cloudwatch:alarm", "none"}, false),
			Source: "internal/service/fis/experiment_template.go, stop_condition (TypeSet).source: validExperimentTemplateStopConditionSource() (StringInSlice(aws:cloudwatch:alarm, none))"},
		{Property: "stopConditions[].value", Attr: "stop_condition.#.value", Check: ValidARN(),
			Source: "internal/service/fis/experiment_template.go, stop_condition.value: verify.ValidARN"},
		{Property: "targets[].name", Attr: "target.#.name", Check: StringLenBetween(0, 64),
			Source: "internal/service/fis/experiment_template.go, target (TypeSet).name: Required, validation.StringLenBetween(0, 64)"},
		{Property: "targets[].resourceType", Attr: "target.#.resource_type", Check: StringLenBetween(0, 64),
			Source: "internal/service/fis/experiment_template.go, target.resource_type: Required, validation.StringLenBetween(0, 64)"},
		{Property: "targets[].selectionMode", Attr: "target.#.selection_mode", Check: All(
			StringLenBetween(0, 64),
			StringMatch(regexp.MustCompile(`^(ALL|COUNT\(\d+\)|PERCENT\(\d+\))$`), "must be one of ALL, COUNT(number), PERCENT(number)"),
		), Source: "internal/service/fis/experiment_template.go, target.selection_mode: Required, validation.All(StringLenBetween(0, 64), " +
			"StringMatch(^(ALL|COUNT\\(\\d+\\)|PERCENT\\(\\d+\\))$, \"must be one of ALL, COUNT(number), PERCENT(number)\"))"},
		{Property: "targets[].resourceTags", Attr: "target.#.resource_tag", Check: MaxItems(50),
			Source: "internal/service/fis/experiment_template.go, target.resource_tag: TypeSet, MaxItems 50"},
		{Property: "targets[].resourceTags[].key", Attr: "target.#.resource_tag.#.key", Check: StringLenBetween(0, 128),
			Source: "internal/service/fis/experiment_template.go, target.resource_tag.key: Required, validation.StringLenBetween(0, 128)"},
		{Property: "targets[].resourceTags[].value", Attr: "target.#.resource_tag.#.value", Check: StringLenBetween(0, 256),
			Source: "internal/service/fis/experiment_template.go, target.resource_tag.value: Required, validation.StringLenBetween(0, 256)"},
		{Property: "targets[].filters[].path", Attr: "target.#.filter.#.path", Check: StringLenBetween(0, 256),
			Source: "internal/service/fis/experiment_template.go, target.filter.path: Required, validation.StringLenBetween(0, 256)"},
		{Property: "targets[].filters[].values", Attr: "target.#.filter.#.values",
			Source: "internal/service/fis/experiment_template.go, target.filter.values: TypeSet of strings, Required"},
		{Property: "targets[].filters[].values[]", Attr: "target.#.filter.#.values.#", Check: StringLenBetween(0, 128),
			Source: "internal/service/fis/experiment_template.go, target.filter.values elements: validation.StringLenBetween(0, 128)"},
		{Property: "targets[].resourceArns", Attr: "target.#.resource_arns", Check: MaxItems(5),
			Source: "internal/service/fis/experiment_template.go, target.resource_arns: TypeSet of strings, MaxItems 5"},
		{Property: "targets[].resourceArns[]", Attr: "target.#.resource_arns.#", Check: ValidARN(),
			Source: "internal/service/fis/experiment_template.go, target.resource_arns elements: verify.ValidARN"},
		{Property: "actions[].name", Attr: "action.#.name", Check: StringLenBetween(0, 64),
			Source: "internal/service/fis/experiment_template.go, action (TypeSet).name: Required, validation.StringLenBetween(0, 64)"},
		{Property: "actions[].actionId", Attr: "action.#.action_id", Check: All(
			StringLenBetween(0, 128),
			StringMatch(regexp.MustCompile(`^aws:[0-9a-z-]+:[0-9A-Za-z/-]+$`), "must be in the format of aws:service-name:action-name"),
		), Source: "internal/service/fis/experiment_template.go, action.action_id: Required, validation.All(StringLenBetween(0, 128), " +
			"StringMatch(^aws:[0-9a-z-]+:[0-9A-Za-z/-]+$, \"must be in the format of aws:service-name:action-name\"))"},
		{Property: "actions[].description", Attr: "action.#.description", Check: StringLenBetween(0, 512),
			Source: "internal/service/fis/experiment_template.go, action.description: validation.StringLenBetween(0, 512)"},
		{Property: "actions[].parameters[].key", Attr: "action.#.parameter.#.key", Check: StringLenBetween(0, 64),
			Source: "internal/service/fis/experiment_template.go, action.parameter.key: Required, validation.StringLenBetween(0, 64)"},
		{Property: "actions[].parameters[].value", Attr: "action.#.parameter.#.value", Check: StringLenBetween(0, 1024),
			Source: "internal/service/fis/experiment_template.go, action.parameter.value: Required, validation.StringLenBetween(0, 1024)"},
		{Property: "actions[].startAfters[]", Attr: "action.#.start_after.#", Check: StringLenBetween(0, 64),
			Source: "internal/service/fis/experiment_template.go, action.start_after (TypeSet) elements: validation.StringLenBetween(0, 64)"},
		{Property: "actions[].target.key", Attr: "action.#.target.0.key", Check: All(StringLenBetween(0, 64), StringInSlice(fisActionTargetKeys, false)),
			Source: "internal/service/fis/experiment_template.go, action.target (MaxItems 1).key: Required, validExperimentTemplateActionTargetKey() " +
				"(StringLenBetween(0, 64), StringInSlice(<action targets>, false))"},
		{Property: "actions[].target.value", Attr: "action.#.target.0.value", Check: StringLenBetween(0, 64),
			Source: "internal/service/fis/experiment_template.go, action.target.value: Required, validation.StringLenBetween(0, 64)"},
		tagsRule("internal/service/fis/experiment_template.go (tftags.TagsSchemaForceNew)"),
	},

	// The provider's configuration: internal/provider/provider.go (SDKv2 schema, which the framework provider's
	// matches), checked by pulumi-aws's CheckConfig; pulumi-terraform-bridge prefixes each reason with "could not
	// validate provider configuration: " (pkg/tfbridge/check_failures.go).
	"pulumi:providers:aws": {
		{Property: "region", Attr: "region",
			Source: "internal/provider/provider.go, region: TypeString, Optional, no ValidateFunc (the region is checked at Configure, unless skip_region_validation)"},
		{Property: "allowedAccountIds", Attr: "allowed_account_ids", Check: ProviderConfig(ConflictsWith(map[string]string{"forbiddenAccountIds": "forbidden_account_ids"})),
			Source: "internal/provider/provider.go, allowed_account_ids: TypeSet of strings, ConflictsWith forbidden_account_ids"},
		{Property: "allowedAccountIds[]", Attr: "allowed_account_ids.#",
			Source: "internal/provider/provider.go, allowed_account_ids elements: schema.TypeString, no ValidateFunc"},
		{Property: "forbiddenAccountIds", Attr: "forbidden_account_ids", Check: ProviderConfig(ConflictsWith(map[string]string{"allowedAccountIds": "allowed_account_ids"})),
			Source: "internal/provider/provider.go, forbidden_account_ids: TypeSet of strings, ConflictsWith allowed_account_ids, no ValidateFunc"},
		{Property: "assumeRole.roleArn", Attr: "assume_role.0.role_arn", Check: ProviderConfig(ValidARN()),
			Source: "internal/provider/provider.go, assumeRoleSchema() (TypeList; pulumi-aws takes one).role_arn: verify.ValidARN"},
		{Property: "assumeRole.sessionName", Attr: "assume_role.0.session_name", Check: ProviderConfig(All(StringLenBetween(2, 64), StringMatch(regexp.MustCompile(`[\w+=,.@\-]*`), ""))),
			Source: "internal/provider/provider.go, assume_role.session_name: validAssumeRoleSessionName (validation.All(StringLenBetween(2, 64), StringMatch([\\w+=,.@\\-]*, \"\")))"},
		{Property: "assumeRole.externalId", Attr: "assume_role.0.external_id", Check: ProviderConfig(All(StringLenBetween(2, 1224), StringMatch(regexp.MustCompile(`[\w+=,.@:\/\-]*`), ""))),
			Source: "internal/provider/provider.go, assume_role.external_id: validation.All(StringLenBetween(2, 1224), StringMatch([\\w+=,.@:\\/\\-]*, \"\"))"},
		{Property: "assumeRole.duration", Attr: "assume_role.0.duration", Check: ProviderConfig(assumeRoleDuration()),
			Source: "internal/provider/provider.go, assume_role.duration: validAssumeRoleDuration (15 minutes to 12 hours)"},
		{Property: "skipCredentialsValidation", Attr: "skip_credentials_validation",
			Source: "internal/provider/provider.go, skip_credentials_validation: TypeBool, Optional, no ValidateFunc (pulumi-aws's SDK defaults it to false)"},
		{Property: "skipRegionValidation", Attr: "skip_region_validation",
			Source: "internal/provider/provider.go, skip_region_validation: TypeBool, Optional, no ValidateFunc (pulumi-aws's SDK defaults it to true)"},
	},
}

// Defaults are the values the provider's schema gives a top-level property the inputs leave unset (its `Default:`),
// by type token and Pulumi property name, each from the Source of the property's rule above or the schema field
// named beside it. A nested block's defaults are not here (they are in the report): the mocks answer top-level
// properties only. Nested defaults of the program's resources: aws:scheduler/schedule:Schedule
// target.retryPolicy.maximumEventAgeInSeconds 86400 and maximumRetryAttempts 185 (schedule.go);
// aws:cloudformation/stackSet:StackSet managedExecution.active false (stack_set.go);
// aws:cloudwatch/metricAlarm:MetricAlarm metricQueries[].returnData false (metric_alarm.go).
var Defaults = map[string]map[string]any{
	// internal/service/sqs/queue.go: defaultQueue* (consts.go), max_message_size 262_144 in v5.100.0.
	"aws:sqs/queue:Queue": {
		"contentBasedDeduplication": false,
		"delaySeconds":              0,
		"fifoQueue":                 false,
		"maxMessageSize":            262144,
		"messageRetentionSeconds":   345600,
		"receiveWaitTimeSeconds":    0,
		"visibilityTimeoutSeconds":  30,
	},
	// internal/service/iam/role.go: force_detach_policies, max_session_duration, path.
	"aws:iam/role:Role": {
		"forceDetachPolicies": false,
		"maxSessionDuration":  3600,
		"path":                "/",
	},
	// internal/service/events/rule.go, target.go: event_bus_name Default DefaultEventBusName.
	"aws:cloudwatch/eventRule:EventRule":     {"eventBusName": "default"},
	"aws:cloudwatch/eventTarget:EventTarget": {"eventBusName": "default"},
	// internal/service/cloudwatch/metric_alarm.go: actions_enabled, treat_missing_data (missingDataMissing).
	"aws:cloudwatch/metricAlarm:MetricAlarm": {
		"actionsEnabled":   true,
		"treatMissingData": "missing",
	},
	// internal/service/logs/group.go: retention_in_days.
	"aws:cloudwatch/logGroup:LogGroup": {"retentionInDays": 0},
	// internal/service/scheduler/schedule.go: schedule_expression_timezone, state.
	"aws:scheduler/schedule:Schedule": {
		"scheduleExpressionTimezone": "UTC",
		"state":                      "ENABLED",
	},
	// internal/service/s3/bucket.go: force_destroy.
	"aws:s3/bucketV2:BucketV2": {"forceDestroy": false},
	// internal/service/s3/bucket_object_lock_configuration.go: object_lock_enabled.
	"aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2": {"objectLockEnabled": "Enabled"},
	// internal/service/s3/bucket_public_access_block.go: the four booleans.
	"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": {
		"blockPublicAcls":       false,
		"blockPublicPolicy":     false,
		"ignorePublicAcls":      false,
		"restrictPublicBuckets": false,
	},
	// internal/service/lambda/function.go: memory_size, timeout, reserved_concurrent_executions, package_type, publish.
	"aws:lambda/function:Function": {
		"memorySize":                   128,
		"timeout":                      3,
		"reservedConcurrentExecutions": -1,
		"packageType":                  "Zip",
		"publish":                      false,
	},
	// internal/service/lambda/event_source_mapping.go: enabled.
	"aws:lambda/eventSourceMapping:EventSourceMapping": {"enabled": true},
	// internal/service/kms/key.go: bypass_policy_lockout_safety_check, customer_master_key_spec, enable_key_rotation,
	// is_enabled, key_usage.
	"aws:kms/key:Key": {
		"bypassPolicyLockoutSafetyCheck": false,
		"customerMasterKeySpec":          "SYMMETRIC_DEFAULT",
		"enableKeyRotation":              false,
		"isEnabled":                      true,
		"keyUsage":                       "ENCRYPT_DECRYPT",
	},
	// internal/service/eks/access_entry.go: type (accessEntryTypeStandard).
	"aws:eks/accessEntry:AccessEntry": {"type": "STANDARD"},
	// internal/service/cloudformation/stack_set.go: call_as, permission_model.
	"aws:cloudformation/stackSet:StackSet": {
		"callAs":          "SELF",
		"permissionModel": "SELF_MANAGED",
	},
	// internal/service/cloudformation/stack_set_instance.go: call_as, retain_stack.
	"aws:cloudformation/stackSetInstance:StackSetInstance": {
		"callAs":      "SELF",
		"retainStack": false,
	},
}

// tagsRule is the rule of a resource's tags: tftags.TagsSchema() (internal/tags), a map of strings without validation.
func tagsRule(file string) Rule {
	return Rule{Property: "tags", Attr: "tags", Source: file + ", tags: tftags.TagsSchema() (internal/tags: TypeMap of strings, no ValidateFunc)"}
}

// The values of the AWS SDK's enums the validators above take, in the SDK's order (aws-sdk-go-v2, as of
// terraform-provider-aws v5.100.0, June 2025).
var (
	cloudwatchStatistics          = []string{"SampleCount", "Average", "Sum", "Minimum", "Maximum"}
	cloudwatchComparisonOperators = []string{
		"GreaterThanOrEqualToThreshold", "GreaterThanThreshold", "LessThanThreshold", "LessThanOrEqualToThreshold",
		"LessThanLowerOrGreaterThanUpperThreshold", "LessThanLowerThreshold", "GreaterThanUpperThreshold",
	}
	// service/lambda types.Runtime, less the runtimes added after June 2025 (nodejs24.x, java25, python3.14,
	// dotnet10, ruby4.0, nodejs26.x, python3.15, java*.al2023).
	lambdaRuntimes = []string{
		"nodejs", "nodejs4.3", "nodejs6.10", "nodejs8.10", "nodejs10.x", "nodejs12.x", "nodejs14.x", "nodejs16.x",
		"nodejs18.x", "nodejs20.x", "nodejs22.x", "java8", "java8.al2", "java11", "java17", "java21", "python2.7",
		"python3.6", "python3.7", "python3.8", "python3.9", "python3.10", "python3.11", "python3.12", "python3.13",
		"dotnetcore1.0", "dotnetcore2.0", "dotnetcore2.1", "dotnetcore3.1", "dotnet6", "dotnet8", "nodejs4.3-edge",
		"go1.x", "ruby2.5", "ruby2.7", "ruby3.2", "ruby3.3", "ruby3.4", "provided", "provided.al2", "provided.al2023",
	}
	// service/kms types.CustomerMasterKeySpec.
	kmsCustomerMasterKeySpecs = []string{
		"RSA_2048", "RSA_3072", "RSA_4096", "ECC_NIST_P256", "ECC_NIST_P384", "ECC_NIST_P521", "ECC_SECG_P256K1",
		"SYMMETRIC_DEFAULT", "HMAC_224", "HMAC_256", "HMAC_384", "HMAC_512", "SM2",
	}
	// internal/service/fis/experiment_template.go, validExperimentTemplateActionTargetKey (with ManagedResources, which
	// v6.83.2's SDK documents).
	fisActionTargetKeys = []string{
		"AutoScalingGroups", "Buckets", "Cluster", "Clusters", "DBInstances", "Instances", "ManagedResources", "Nodegroups",
		"Pods", "ReplicationGroups", "Roles", "SpotInstances", "Subnets", "Tables", "Tasks", "TransitGateways", "Volumes",
	}
)

// iamResourceName is validResourceName(max) (internal/service/iam/validate.go).
func iamResourceName(max int) Validator {
	return All(StringLenBetween(1, max), StringMatch(regexp.MustCompile(`^[\w+=,.@-]*$`), `must match [\w+=,.@-]`))
}

// iamRolePolicyRole is validRolePolicyRole (internal/service/iam/validate.go).
func iamRolePolicyRole() Validator {
	notARN := func(attr string, v resource.PropertyValue, in Inputs) []string {
		if len(ValidARN()(attr, v, in)) == 0 {
			return []string{fmt.Sprintf("%q must be the role's name not its ARN", attr)}
		}
		return nil
	}
	return All(StringLenBetween(1, 128), StringMatch(regexp.MustCompile(`[\w+=,.@-]+`), ""), notARN)
}

// eventsName is validateRuleName and validateTargetID (internal/service/events/validate.go).
func eventsName(max int) Validator {
	return lengthAndPattern(max, `^[0-9A-Za-z_.-]+$`, func(attr, value, pattern string) string {
		return fmt.Sprintf("%q doesn't comply with restrictions (%q): %q", attr, pattern, value)
	})
}

// dashboardName is validDashboardName (internal/service/cloudwatch/validate.go).
func dashboardName() Validator {
	return lengthAndPattern(255, `^[0-9A-Za-z_-]+$`, func(attr, value, pattern string) string {
		return fmt.Sprintf("%q doesn't comply with restrictions (%q): %q", attr, pattern, value)
	})
}

// logGroupName is validLogGroupName (internal/service/logs/validate.go).
func logGroupName(max int) Validator {
	return lengthAndPattern(max, `^[0-9A-Za-z_./#-]+$`, func(attr, value, _ string) string {
		return fmt.Sprintf("%q isn't a valid log group name (alphanumeric characters, underscores, hyphens, slashes, hash signs and dots are allowed): %q", attr, value)
	})
}

// lengthAndPattern is the shape of the provider's older name validators: "%q cannot be longer than %d characters: %q",
// then the pattern's own message; both may be reported.
func lengthAndPattern(max int, pattern string, mismatch func(attr, value, pattern string) string) Validator {
	re := regexp.MustCompile(pattern)
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		var out []string
		if len(s) > max {
			out = append(out, fmt.Sprintf("%q cannot be longer than %d characters: %q", attr, max, s))
		}
		if !re.MatchString(s) {
			out = append(out, mismatch(attr, s, pattern))
		}
		return out
	}
}

// eksClusterName is validClusterName (internal/service/eks/validate.go).
func eksClusterName() Validator {
	const pattern = `^[0-9A-Za-z][0-9A-Za-z_-]*$`
	re := regexp.MustCompile(pattern)
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		var out []string
		if len(s) < 1 || len(s) > 100 {
			out = append(out, fmt.Sprintf("%q length must be between 1-100 characters: %q", attr, s))
		}
		if !re.MatchString(s) {
			out = append(out, fmt.Sprintf("%q doesn't comply with restrictions (%q): %q", attr, pattern, s))
		}
		return out
	}
}

// kmsAliasName is validNameForResource (internal/service/kms/validate.go; aliasNamePrefix "alias/", cmkAliasPrefix
// "alias/aws/").
func kmsAliasName() Validator {
	reserved := regexp.MustCompile(`^(alias/aws/)`)
	name := regexp.MustCompile(`^alias/[0-9A-Za-z_/-]+$`)
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		var out []string
		if reserved.MatchString(s) {
			out = append(out, fmt.Sprintf("%q cannot begin with reserved AWS CMK prefix 'alias/aws/'", attr))
		}
		if !name.MatchString(s) {
			out = append(out, fmt.Sprintf("%q must begin with 'alias/' and be comprised of only [0-9A-Za-z_/-]", attr))
		}
		return out
	}
}

// ec2AutomateARN is validEC2AutomateARN (internal/service/cloudwatch/validate.go).
func ec2AutomateARN() Validator {
	const pattern = `^arn:[\w-]+:automate:[\w-]+:ec2:(reboot|recover|stop|terminate)$`
	re := regexp.MustCompile(pattern)
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if !re.MatchString(s) {
			return []string{fmt.Sprintf("%q does not match EC2 automation ARN (%q): %q", attr, pattern, s)}
		}
		return nil
	}
}

// accountID is verify.ValidAccountID (internal/verify/validate.go: itypes.IsAWSAccountID, 12 digits).
func accountID() Validator {
	re := regexp.MustCompile(`^\d{12}$`)
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if !re.MatchString(s) {
			return []string{fmt.Sprintf("%q doesn't look like AWS Account ID (exactly 12 digits): %q", attr, s)}
		}
		return nil
	}
}

// eventPatternValue is validateEventPatternValue() (internal/service/events/rule.go): valid JSON, normalized by
// ruleEventPatternJSONDecoder (json.Marshal, with <, > and & left unescaped), at most 4096 characters.
func eventPatternValue() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if s == "" {
			return nil
		}
		var j any
		if err := json.Unmarshal([]byte(s), &j); err != nil {
			return []string{fmt.Sprintf("%q contains an invalid JSON: %s", attr, err)}
		}
		b, err := json.Marshal(j)
		if err != nil {
			return []string{fmt.Sprintf("%q contains an invalid JSON: %s", attr, err)}
		}
		b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
		b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
		b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
		const maxJSONLength = 4096
		if len(b) > maxJSONLength {
			return []string{fmt.Sprintf("%q cannot be longer than %d characters: %q", attr, maxJSONLength, string(b))}
		}
		return nil
	}
}

// eventBusNameOrARN is validBusNameOrARN (internal/service/events/validate.go): validation.All(StringLenBetween(1,
// 1600), validation.Any(verify.ValidARNCheck(eventBusARNCheck), StringMatch(^[/\.\-_A-Za-z0-9]+$, ""))).
func eventBusNameOrARN() Validator {
	busName := regexp.MustCompile(`^[/\.\-_A-Za-z0-9]+$`)
	busResource := regexp.MustCompile(`^event-bus/([/\.\-_A-Za-z0-9]+)$`)
	// verify.ValidARNCheck runs its checks (eventBusARNCheck) after the generic ones, whatever they found, on every
	// non-empty value arn.Parse takes.
	busARN := func(attr string, v resource.PropertyValue, in Inputs) []string {
		out := ValidARN()(attr, v, in)
		s, _ := stringOf(v)
		if p, err := parseARN(s); err == nil && (p.service != "events" || !busResource.MatchString(p.resource)) {
			out = append(out, fmt.Sprintf("%q (%s) is not a valid Event Bus ARN", attr, s))
		}
		return out
	}
	return All(StringLenBetween(1, 1600), Any(busARN, StringMatch(busName, "")))
}

// sqsQueueName is resourceQueueCustomizeDiff's name check (internal/service/sqs/queue.go), at create.
func sqsQueueName() Validator {
	standard := regexp.MustCompile(`^[0-9A-Za-z_-]{1,80}$`)
	fifo := regexp.MustCompile(`^[0-9A-Za-z_-]{1,75}\.fifo$`)
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return nil
		}
		re := standard
		if f, ok := in.get("fifoQueue"); ok && f.IsBool() && f.BoolValue() {
			re = fifo
		}
		if !re.MatchString(s) {
			return []string{fmt.Sprintf("invalid queue name: %s", s)}
		}
		return nil
	}
}

// metricAlarmStatistic is the metric alarm's CustomizeDiff (internal/service/cloudwatch/metric_alarm.go): with
// metric_name set, exactly one of statistic and extended_statistic (GetOk: an empty string is unset).
func metricAlarmStatistic() Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		if s, ok := stringOf(v); !ok || s == "" {
			return nil
		}
		statistic, extended := in.Set("statistic"), in.Set("extendedStatistic")
		if statistic == extended {
			return []string{"One of `statistic` or `extended_statistic` must be set for a cloudwatch metric alarm"}
		}
		return nil
	}
}

// metricQueryExpressionOrMetric is the metric alarm's CustomizeDiff (internal/service/cloudwatch/metric_alarm.go): no
// metric_query with both a non-empty expression and a metric.
func metricQueryExpressionOrMetric() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		v = plain(v)
		if !v.IsArray() {
			return nil
		}
		for _, q := range v.ArrayValue() {
			if q = plain(q); !q.IsObject() {
				continue
			}
			e, m := plain(q.ObjectValue()["expression"]), plain(q.ObjectValue()["metric"])
			if e.IsString() && e.StringValue() != "" && m.IsObject() && len(m.ObjectValue()) > 0 {
				return []string{"No metric_query may have both `expression` and a `metric` specified"}
			}
		}
		return nil
	}
}

// assumeRoleDuration is validAssumeRoleDuration (internal/provider/validate.go).
func assumeRoleDuration() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return []string{fmt.Sprintf("%q cannot be parsed as a duration: %s", attr, err)}
		}
		if d.Minutes() < 15 || d.Hours() > 12 {
			return []string{fmt.Sprintf("duration %q must be between 15 minutes (15m) and 12 hours (12h), inclusive", attr)}
		}
		return nil
	}
}
